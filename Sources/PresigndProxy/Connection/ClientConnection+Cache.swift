/// The read cache on the connection (issue 23): what a write through presignd makes stale.
extension ClientConnection {
    /// Drops the cached objects the exchange's write changes (`CacheInvalidation`), from every open store. Called
    /// when the request is routed (before any of it is sent) and again when its answer arrives: a read that
    /// follows the write's answer cannot find the old object, even one cached while the write was in flight.
    func invalidateCache(_ exchange: Exchange) {
        guard let invalidation = exchange.cacheInvalidation else { return }
        for failure in invalidation.apply(to: settings.caches) {
            worker.logger.error(
                "Cache invalidation failed",
                metadata: [
                    "cache.directory": failure.directory, "error": failure.error.description,
                    "request.id": exchange.requestID,
                ])
        }
    }
}
