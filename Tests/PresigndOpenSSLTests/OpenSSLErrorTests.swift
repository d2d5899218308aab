import COpenSSL
import PresigndOpenSSL
import Testing

@Suite struct OpenSSLErrorTests {
    @Test func drainsTheQueueOfTheFailedCallIntoTheError() {
        _ = OpenSSLError.drain("before")
        #expect(BIO_new_file("/nonexistent-presignd-test/ca.pem", "r") == nil)
        let error = OpenSSLError.drain("BIO_new_file")
        #expect(!error.reasons.isEmpty)
        #expect(error.description.hasPrefix("BIO_new_file: error:"), "\(error)")
        #expect(OpenSSLError.drain("again").reasons.isEmpty, "the queue is empty once drained")
    }

    @Test func describesAnEmptyQueueByTheOperationAlone() {
        _ = OpenSSLError.drain("before")
        #expect(OpenSSLError.drain("SSL_CTX_new").description == "SSL_CTX_new")
    }

    @Test func describesOnePackedCode() {
        _ = OpenSSLError.drain("before")
        _ = BIO_new_file("/nonexistent-presignd-test/ca.pem", "r")
        let code = ERR_peek_error()
        #expect(code != 0)
        #expect(OpenSSLError.describe(code) == OpenSSLError.drain("BIO_new_file").reasons.first)
    }

    @Test func clearEmptiesAQueueThatHoldsErrorsAndLeavesAnEmptyOneEmpty() {
        _ = OpenSSLError.drain("before")
        OpenSSLError.clear()
        #expect(ERR_peek_error() == 0)
        _ = BIO_new_file("/nonexistent-presignd-test/ca.pem", "r")
        _ = BIO_new_file("/nonexistent-presignd-test/other.pem", "r")
        #expect(ERR_peek_error() != 0)
        OpenSSLError.clear()
        #expect(ERR_peek_error() == 0, "every entry went, not only the first")
        #expect(OpenSSLError.drain("after").reasons.isEmpty)
    }
}
