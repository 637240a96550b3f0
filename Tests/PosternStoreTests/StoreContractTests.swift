import PosternCore
import PosternTestSupport
import Testing

extension StoreContractCase: CustomTestStringConvertible {
    public var testDescription: String { description }
}

/// The store contract (``StoreContract``) on SQLite and PostgreSQL, each case on a database of its own.
@Suite("Store contract: SQLite and PostgreSQL")
struct StoreContractTests {
    @Test("every store contract case holds on each real store", arguments: StoreKind.available, StoreContract.cases)
    func contract(kind: StoreKind, contractCase: StoreContractCase) throws {
        let store = try kind.database().open()
        defer { store.close() }
        try contractCase.run(on: store)
    }
}
