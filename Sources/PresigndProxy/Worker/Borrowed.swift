/// An unretained reference for the hot path: a call through it neither retains nor releases the object
/// (`_withUnsafeGuaranteedRef`), where a strong or `unowned(unsafe)` reference costs an atomic retain and release
/// around most uses (the compiler cannot prove the callee leaves the object alive). Only for an object that another,
/// owning reference keeps alive for as long as this one is used.
struct Borrowed<Object: AnyObject> {
    private let reference: Unmanaged<Object>

    init(_ object: Object) {
        reference = .passUnretained(object)
    }

    @inline(__always)
    func with<Result>(_ body: (Object) -> Result) -> Result {
        reference._withUnsafeGuaranteedRef(body)
    }
}

extension Borrowed: Equatable {
    /// The same object (identity, as `===`).
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.reference.toOpaque() == rhs.reference.toOpaque()
    }
}
