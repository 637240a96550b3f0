import PosternCore

extension AuthError.Kind {
    /// The HTTP status that carries an error of this kind: the one mapping of the HTTP layer.
    var httpStatus: Int {
        switch self {
        case .invalidInput: 400
        case .unauthorized: 401
        case .forbidden: 403
        case .notFound: 404
        case .conflict: 409
        case .rateLimited: 429
        case .unavailable: 503
        case .internalFailure: 500
        }
    }
}

extension AuthError {
    /// The HTTP status of this error.
    var httpStatus: Int { kind.httpStatus }
}
