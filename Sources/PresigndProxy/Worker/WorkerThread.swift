#if canImport(Glibc)
    import Glibc
#endif

/// Runs a worker's loop on its own pthread; `onExit` runs on that thread when the loop ends.
enum WorkerThread {
    private final class Context {
        let worker: Worker
        let onExit: () -> Void
        init(worker: Worker, onExit: @escaping () -> Void) {
            self.worker = worker
            self.onExit = onExit
        }
    }

    static func start(_ worker: Worker, onExit: @escaping () -> Void) throws(StartupError) -> pthread_t {
        let context = Unmanaged.passRetained(Context(worker: worker, onExit: onExit)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let context = Unmanaged<Context>.fromOpaque(raw).takeRetainedValue()
                context.worker.run()
                context.onExit()
                return nil
            }, context)
        guard status == 0 else {
            Unmanaged<Context>.fromOpaque(context).release()
            throw .eventLoop("pthread_create: \(String(cString: strerror(status)))")
        }
        return thread
    }
}
