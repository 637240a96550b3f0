import PosternCore
import PosternTestSupport
import Testing

extension StoreContractCase: CustomTestStringConvertible {
    public var testDescription: String { description }
}

/// The store contract on the in-memory store Core's tests run on: every case it fails is behaviour
/// a Core test could rely on and production not have.
@Suite("Store contract: memory")
struct StoreContractMemoryTests {
    @Test("every store contract case holds on the in-memory store", arguments: StoreContract.cases)
    func contract(_ contractCase: StoreContractCase) throws {
        try contractCase.run(on: InMemoryStore())
    }
}
