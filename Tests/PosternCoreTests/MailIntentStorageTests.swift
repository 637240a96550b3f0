import PosternCore
import Testing

@Suite("Mail intent storage text")
struct MailIntentStorageTests {
    @Test("every intent reads back from its storage text; ids may hold colons; junk is refused")
    func roundTrip() {
        let intents: [MailIntent] = [
            .signIn(requestID: "r1"), .signUp(requestID: "r:2"), .resetPassword(requestID: ""), .verifyEmail(requestID: "v"),
            .changeEmail(requestID: "c"), .recoverEmail(requestID: "x"), .passwordChanged(uid: "u_1"),
        ]
        for intent in intents { #expect(MailIntent(storageText: intent.storageText) == intent) }
        #expect(MailIntent.signUp(requestID: "r:2").storageText == "sign-up:r:2")
        #expect(MailIntent(storageText: "sign-in") == nil)
        #expect(MailIntent(storageText: "launch-missiles:1") == nil)
    }
}
