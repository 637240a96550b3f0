import Foundation
import PosternAPI
import PosternCore

extension APIRouter {
    /// Phone numbers by consent of both parties (API.md "Phone numbers and SMS"): the owner's side under
    /// `/v1/me/phones`, the holder's under `/v1/phones/claims/{claimId}` (the SMS code is the key).
    static func phoneRoutes(_ runtime: ServerContext) -> [Route] {
        let service = runtime.service
        let claimPath: [String: JSONSchema] = ["claimId": .phoneClaimID]
        @Sendable func claimID(_ c: RouteContext) -> String { c.parameters["claimId"] ?? "" }
        @Sendable func accepted(_ status: Int, _ id: String, _ word: String) -> HTTPResponse {
            .body(status, PhoneClaimAcceptedBody(claimId: id, status: word))
        }
        let numberRefusals: [APIErrorCode] = [.invalidPhoneNumber, .tooManyAttempts]
        return [
            Route(method: "GET", path: "/v1/me/phones", summary: "The account's phone claims, pending and verified (transfers that are due are settled)", access: .user, status: 200,
                  contract: .init(answer: .json(PhoneClaimListBody.self))) { c throws(AuthError) in
                let claims = try service.phoneOwner.list(idToken: try c.idToken())
                return .body(200, PhoneClaimListBody(claims: claims.map(PhoneClaimBody.init)))
            },
            Route(method: "POST", path: "/v1/me/phones", summary: "Ask to add a phone number (recent sign-in): an SMS code goes to it; the same answer for every number", access: .user, status: 202,
                  contract: .init(request: .json(AddPhoneBody.self), answer: .json(PhoneClaimAcceptedBody.self),
                                  errors: [.requiresRecentLogin, .anonymousAccount, .challengeRequired] + numberRefusals)) { c throws(AuthError) in
                let body = try c.body(AddPhoneBody.self)
                let claim = try service.phoneOwner.add(
                    idToken: try c.idToken(), phoneNumber: body.phoneNumber, locale: body.locale, clientIP: c.clientIP,
                    challengePass: try service.challenges.check(solution: body.challengeSolution, clientIP: c.clientIP))
                return accepted(202, claim.claimID, "sms_sent")
            },
            Route(method: "POST", path: "/v1/me/phones/{claimId}/verify", summary: "Prove the number with the SMS code typed into the owner's session (one person: both agree)", access: .user, status: 200,
                  contract: .init(request: .json(PhoneCodeBody.self), answer: .json(PhoneClaimAcceptedBody.self),
                                  errors: [.invalidPhoneCode, .phoneClaimNotFound, .tooManyAttempts], pathParameters: claimPath)) { c throws(AuthError) in
                let body = try c.body(PhoneCodeBody.self)
                let proof = try service.phoneOwner.prove(idToken: try c.idToken(), claimID: claimID(c), code: body.code)
                return accepted(200, proof.claimID, "proved")
            },
            Route(method: "POST", path: "/v1/me/phones/{claimId}/approve", summary: "Approve a claim the number's holder proved first (recent sign-in)", access: .user, status: 200,
                  contract: .init(request: .json(EmptyBody.self), answer: .json(PhoneClaimAcceptedBody.self),
                                  errors: [.requiresRecentLogin, .phoneClaimNotFound, .phoneClaimState], pathParameters: claimPath)) { c throws(AuthError) in
                _ = try c.body(EmptyBody.self)
                let proof = try service.phoneOwner.approve(idToken: try c.idToken(), claimID: claimID(c))
                return accepted(200, proof.claimID, "approved")
            },
            Route(method: "POST", path: "/v1/me/phones/{claimId}/release", summary: "Let a verified number go now to the account that claimed it with its holder (recent sign-in)", access: .user, status: 204,
                  contract: .init(request: .json(EmptyBody.self), answer: .noContent,
                                  errors: [.requiresRecentLogin, .phoneClaimNotFound, .phoneClaimState], pathParameters: claimPath)) { c throws(AuthError) in
                _ = try c.body(EmptyBody.self)
                try service.phoneOwner.release(idToken: try c.idToken(), claimID: claimID(c))
                return HTTPResponse(status: 204)
            },
            Route(method: "POST", path: "/v1/me/phones/{claimId}/object", summary: "Keep a verified number: end the claims of other accounts waiting for it", access: .user, status: 204,
                  contract: .init(request: .json(EmptyBody.self), answer: .noContent,
                                  errors: [.phoneClaimNotFound, .phoneClaimState], pathParameters: claimPath)) { c throws(AuthError) in
                _ = try c.body(EmptyBody.self)
                try service.phoneOwner.object(idToken: try c.idToken(), claimID: claimID(c))
                return HTTPResponse(status: 204)
            },
            Route(method: "DELETE", path: "/v1/me/phones/{claimId}", summary: "Delete a phone claim (a verified number is free again)", access: .user, status: 204,
                  contract: .init(answer: .noContent, errors: [.phoneClaimNotFound], pathParameters: claimPath)) { c throws(AuthError) in
                try service.phoneOwner.delete(idToken: try c.idToken(), claimID: claimID(c))
                return HTTPResponse(status: 204)
            },
            Route(method: "POST", path: "/v1/phone/send", summary: "A sign-in code by SMS (only with --phone-sign-in; otherwise PHONE_SIGN_IN_DISABLED): the same answer for every number", access: .public, status: 202,
                  contract: .init(request: .json(PhoneSignInSendBody.self), answer: .json(AcceptedBody.self),
                                  errors: [.phoneSignInDisabled, .invalidIDToken, .smsCountryNotAllowed, .challengeRequired] + numberRefusals)) { c throws(AuthError) in
                let body = try c.body(PhoneSignInSendBody.self)
                let pass = try service.challenges.check(solution: body.challengeSolution, clientIP: c.clientIP)
                try service.phoneSignIn.send(
                    phoneNumber: body.phoneNumber, locale: body.locale, idToken: body.idToken ?? c.bearer, clientIP: c.clientIP,
                    challengePass: pass)
                return .body(202, AcceptedBody(status: .sent))
            },
            Route(method: "POST", path: "/v1/phone/complete", summary: "Sign in with the SMS code (only with --phone-sign-in; otherwise PHONE_SIGN_IN_DISABLED): the email link's six cases, for the account that holds the number", access: .public, status: 200,
                  contract: .init(request: .json(PhoneSignInCompleteBody.self), answer: .json(LoginBody.self),
                                  errors: [.phoneSignInDisabled, .invalidPhoneCode, .invalidPhoneNumber, .invalidIDToken, .requiresRecentLogin,
                                           .userDisabled, .migrationRequired, .credentialAlreadyInUse, .tooManyAttempts, .signUpNotAllowed,
                                           .hookDenied, .hookFailed],
                                  links: .signedIn)) { c throws(AuthError) in
                let body = try c.body(PhoneSignInCompleteBody.self)
                let login = try service.phoneSignIn.complete(
                    phoneNumber: body.phoneNumber, code: body.code, idToken: body.idToken ?? c.bearer, allowMigration: body.allowMigration)
                return .body(200, LoginBody(login))
            },
            Route(method: "POST", path: "/v1/phones/claims", summary: "The number's holder asks for it to join an account, whose owner approves later (a session of an account with a proved address or a phone, any session with --phone-sign-in; the same answer for every number and address)", access: .user, status: 202,
                  contract: .init(request: .json(StartPhoneClaimBody.self), answer: .json(PhoneClaimAcceptedBody.self),
                                  errors: [.invalidEmail, .anonymousAccount, .challengeRequired] + numberRefusals)) { c throws(AuthError) in
                let body = try c.body(StartPhoneClaimBody.self)
                let claim = try service.phoneHolder.start(
                    idToken: try c.idToken(), phoneNumber: body.phoneNumber, email: body.email, locale: body.locale, clientIP: c.clientIP,
                    challengePass: try service.challenges.check(solution: body.challengeSolution, clientIP: c.clientIP))
                return accepted(202, claim.claimID, "sms_sent")
            },
            Route(method: "POST", path: "/v1/phones/claims/{claimId}/prove", summary: "The number's holder proves it with the SMS code (5 tries, 10 minutes)", access: .public, status: 200,
                  contract: .init(request: .json(PhoneCodeBody.self), answer: .json(PhoneClaimAcceptedBody.self),
                                  errors: [.invalidPhoneCode, .tooManyAttempts], pathParameters: claimPath)) { c throws(AuthError) in
                let proof = try service.phoneHolder.prove(claimID: claimID(c), code: try c.body(PhoneCodeBody.self).code)
                return accepted(200, proof.claimID, "proved")
            },
            Route(method: "POST", path: "/v1/phones/claims/{claimId}/read", summary: "The number's holder reads the claim its SMS code proves", access: .public, status: 200,
                  contract: .init(request: .json(PhoneCodeBody.self), answer: .json(PhoneClaimBody.self),
                                  errors: [.invalidPhoneCode, .tooManyAttempts], pathParameters: claimPath)) { c throws(AuthError) in
                let claim = try service.phoneHolder.read(claimID: claimID(c), code: try c.body(PhoneCodeBody.self).code)
                return .body(200, PhoneClaimBody(claim))
            },
            Route(method: "POST", path: "/v1/phones/claims/{claimId}/delete", summary: "The number's holder deletes the claim its SMS code proves (a verified number is free again)", access: .public, status: 204,
                  contract: .init(request: .json(PhoneCodeBody.self), answer: .noContent,
                                  errors: [.invalidPhoneCode, .tooManyAttempts], pathParameters: claimPath)) { c throws(AuthError) in
                try service.phoneHolder.delete(claimID: claimID(c), code: try c.body(PhoneCodeBody.self).code)
                return HTTPResponse(status: 204)
            },
        ]
    }
}
