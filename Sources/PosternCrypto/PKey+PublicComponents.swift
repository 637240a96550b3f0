internal import COpenSSL

extension PKey {
    /// A public-only key of OpenSSL key type `type` (`RSA`, `EC`) from the parameters `build` pushes
    /// onto a parameter builder (OpenSSL's `EVP_PKEY_fromdata`), checked with `EVP_PKEY_public_check`
    /// (an EC point must lie on its curve). The builder keeps what it is given by reference until
    /// it is turned into parameters here: what `build` pushes, names included (the shim's
    /// `postern_name_*`, not Swift strings), must outlive this call.
    /// - Throws: `CryptoError.malformed(what)` when OpenSSL refuses the parameters.
    static func publicKey(
        type: String, what: String, _ build: (OpaquePointer) -> Bool
    ) throws(CryptoError) -> PKey {
        guard let builder = OSSL_PARAM_BLD_new() else { throw .openSSL("OSSL_PARAM_BLD_new") }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard build(builder), let params = OSSL_PARAM_BLD_to_param(builder) else {
            ERR_clear_error()
            throw .malformed(what)
        }
        defer { OSSL_PARAM_free(params) }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { throw .openSSL("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(ctx) }
        try check(EVP_PKEY_fromdata_init(ctx), "EVP_PKEY_fromdata_init")
        var made: OpaquePointer?
        guard EVP_PKEY_fromdata(ctx, &made, postern_selection_public_key(), params) == 1, let made else {
            ERR_clear_error()
            throw .malformed(what)
        }
        let key = PKey(made)
        guard let checker = EVP_PKEY_CTX_new_from_pkey(nil, made, nil) else { throw .openSSL("EVP_PKEY_CTX_new_from_pkey") }
        defer { EVP_PKEY_CTX_free(checker) }
        guard EVP_PKEY_public_check(checker) == 1 else {
            ERR_clear_error()
            throw .malformed(what)
        }
        return key
    }
}
