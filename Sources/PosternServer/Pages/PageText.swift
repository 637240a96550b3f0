/// The hosted page's words, per language, falling back to English like the mail.
struct PageText {
    let lang: String
    private let table: [String: String]

    init(lang: String?) {
        let wanted = (lang ?? "en").lowercased()
        let base = String(wanted.split(separator: "-").first ?? "en")
        if let table = Self.tables[wanted] ?? Self.tables[base] {
            self.lang = Self.tables[wanted] != nil ? wanted : base
            self.table = table
        } else {
            self.lang = "en"
            self.table = Self.tables["en"] ?? [:]
        }
    }

    subscript(_ key: String) -> String { table[key] ?? Self.tables["en"]?[key] ?? key }

    static let tables: [String: [String: String]] = [
        "en": [
            "title": "Postern",
            "signIn.heading": "Sign in",
            "signIn.continue": "Continue to the app",
            "signIn.noContinue": "Go back to the app and paste this link, or type the code below.",
            "signIn.code": "On another device? Type this code there:",
            "reset.heading": "Choose a new password",
            "reset.label": "New password (8 to 256 characters)",
            "reset.submit": "Save the new password",
            "reset.done": "Your password has been changed. You can sign in with it now.",
            "verifyEmail.heading": "Confirm your email address",
            "verifyEmail.body": "Confirm that %@ is your address.",
            "verifyEmail.submit": "Confirm",
            "verifyEmail.done": "%@ is confirmed as your address.",
            "verifyAndChangeEmail.heading": "Change your email address",
            "verifyAndChangeEmail.body": "Use %@ as the address of your account from now on.",
            "verifyAndChangeEmail.submit": "Change the address",
            "verifyAndChangeEmail.done": "Your account now uses %@.",
            "done.heading": "Done",
            "recoverEmail.heading": "Undo the change of your address",
            "recoverEmail.body": "Put %@ back as the address of your account and sign out everywhere.",
            "recoverEmail.submit": "Restore my address",
            "recoverEmail.done": "Your address is restored and every session was signed out. Consider resetting your password.",
            "back": "Back to the app",
            "error.heading": "This link cannot be used",
            "error.expired": "The link has expired. Ask for a new one.",
            "error.invalid": "The link is invalid or was already used. Ask for a new one.",
            "error.form": "The form expired or was sent from another page. Open the link again.",
            "error.weak.tooShort": "That password is too short: it needs at least 8 characters.",
            "error.weak.tooLong": "That password is too long: it may have at most 256 characters.",
            "error.weak.isTheAddress": "That password cannot be used: it must not be your email address or its part before the @.",
            "error.taken": "That address already belongs to another account.",
        ],
        "de": [
            "title": "Postern",
            "signIn.heading": "Anmelden",
            "signIn.continue": "Weiter zur App",
            "signIn.noContinue": "Gehen Sie zurück zur App und fügen Sie diesen Link ein, oder geben Sie den Code unten ein.",
            "signIn.code": "Auf einem anderen Gerät? Geben Sie dort diesen Code ein:",
            "reset.heading": "Neues Passwort wählen",
            "reset.label": "Neues Passwort (8 bis 256 Zeichen)",
            "reset.submit": "Neues Passwort speichern",
            "reset.done": "Ihr Passwort wurde geändert. Sie können sich jetzt damit anmelden.",
            "verifyEmail.heading": "E-Mail-Adresse bestätigen",
            "verifyEmail.body": "Bestätigen Sie, dass %@ Ihre Adresse ist.",
            "verifyEmail.submit": "Bestätigen",
            "verifyEmail.done": "%@ ist als Ihre Adresse bestätigt.",
            "verifyAndChangeEmail.heading": "E-Mail-Adresse ändern",
            "verifyAndChangeEmail.body": "Ab jetzt %@ als Adresse Ihres Kontos verwenden.",
            "verifyAndChangeEmail.submit": "Adresse ändern",
            "verifyAndChangeEmail.done": "Ihr Konto verwendet jetzt %@.",
            "done.heading": "Erledigt",
            "recoverEmail.heading": "Änderung Ihrer Adresse rückgängig machen",
            "recoverEmail.body": "%@ wieder als Adresse Ihres Kontos eintragen und überall abmelden.",
            "recoverEmail.submit": "Meine Adresse wiederherstellen",
            "recoverEmail.done": "Ihre Adresse ist wiederhergestellt und alle Sitzungen wurden beendet. Setzen Sie am besten Ihr Passwort zurück.",
            "back": "Zurück zur App",
            "error.heading": "Dieser Link kann nicht verwendet werden",
            "error.expired": "Der Link ist abgelaufen. Fordern Sie einen neuen an.",
            "error.invalid": "Der Link ist ungültig oder wurde schon verwendet. Fordern Sie einen neuen an.",
            "error.form": "Das Formular ist abgelaufen oder kam von einer anderen Seite. Öffnen Sie den Link erneut.",
            "error.weak.tooShort": "Dieses Passwort ist zu kurz: es braucht mindestens 8 Zeichen.",
            "error.weak.tooLong": "Dieses Passwort ist zu lang: es darf höchstens 256 Zeichen haben.",
            "error.weak.isTheAddress": "Dieses Passwort geht nicht: es darf nicht Ihre E-Mail-Adresse oder deren Teil vor dem @ sein.",
            "error.taken": "Diese Adresse gehört schon zu einem anderen Konto.",
        ],
    ]
}
