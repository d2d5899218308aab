import Testing

@testable import PresigndProxy

/// The streamed aws-chunked upload, event by event (issue 21): what goes upstream, what waits, when it is refused.
@Suite struct AWSChunkedUploadStateMachineTests {
    typealias Machine = AWSChunkedUploadStateMachine

    static func complete(_ trailer: String? = "AAAA", computed: String? = "AAAA") -> Machine.Event {
        .complete(trailerChecksum: trailer, computed: computed, undeclaredChecksum: false)
    }

    @Test func forwardsAllButTheLastByteThenReleasesOnAMatchingTrailerAndTheBodysEnd() {
        var machine = Machine(decodedLength: 10, checksum: .crc32)
        #expect(machine.handle(.payload(count: 4)) == [.forward(4)])
        #expect(machine.handle(.payload(count: 6)) == [.forward(5), .hold(1)])
        #expect(machine.state == .receiving(decoded: 10))
        #expect(machine.handle(Self.complete()) == [])
        #expect(machine.state == .verified)
        #expect(machine.handle(.clientBodyEnded) == [.release])
        #expect(machine.state == .released)
        #expect(machine.handle(.payload(count: 1)) == [])
    }

    @Test func holdsAcrossPiecesThatEndBeforeTheHoldBack() {
        var machine = Machine(decodedLength: 10, checksum: nil, holdBack: 3)
        #expect(machine.handle(.payload(count: 7)) == [.forward(7)])
        #expect(machine.handle(.payload(count: 2)) == [.hold(2)])
        #expect(machine.handle(.payload(count: 1)) == [.hold(1)])
        #expect(machine.handle(Self.complete(nil, computed: nil)) == [])
        #expect(machine.handle(.clientBodyEnded) == [.release])
    }

    @Test func aOneByteBodyIsHeldWhole() {
        var machine = Machine(decodedLength: 1, checksum: .sha256)
        #expect(machine.handle(.payload(count: 1)) == [.hold(1)])
    }

    @Test func aMismatchedTrailerIsBadDigestAndNothingIsReleased() {
        var machine = Machine(decodedLength: 3, checksum: .crc64nvme)
        _ = machine.handle(.payload(count: 3))
        #expect(
            machine.handle(Self.complete("AAAA", computed: "BBBB")) == [
                .fail(.badDigest("the x-amz-checksum-crc64nvme trailer does not match the body"))
            ])
        #expect(machine.state == .failed)
        #expect(machine.handle(.clientBodyEnded) == [])
    }

    @Test func aMissingDeclaredTrailerIsBadDigest() {
        var machine = Machine(decodedLength: 3, checksum: .crc32c)
        _ = machine.handle(.payload(count: 3))
        #expect(
            machine.handle(Self.complete(nil)) == [.fail(.badDigest("the x-amz-checksum-crc32c trailer is missing"))])
    }

    @Test func aBodyEndingBeforeItsTrailerIsBadDigest() {
        var machine = Machine(decodedLength: 3, checksum: .crc32)
        _ = machine.handle(.payload(count: 3))
        #expect(
            machine.handle(.clientBodyEnded) == [
                .fail(.badDigest("the body ended before its x-amz-checksum-crc32 trailer"))
            ])
    }

    @Test func aBodyEndingMidPayloadIsInvalidRequest() {
        var machine = Machine(decodedLength: 3, checksum: nil)
        _ = machine.handle(.payload(count: 2))
        #expect(
            machine.handle(.clientBodyEnded) == [
                .fail(.badRequest("the aws-chunked body ended before x-amz-decoded-content-length bytes"))
            ])
    }

    @Test func payloadBeyondTheDecodedLengthIsRefusedBeforeItIsForwarded() {
        var machine = Machine(decodedLength: 5, checksum: nil)
        #expect(machine.handle(.payload(count: 3)) == [.forward(3)])
        #expect(
            machine.handle(.payload(count: 3)) == [
                .fail(.badRequest("the aws-chunked body is longer than x-amz-decoded-content-length"))
            ])
    }

    @Test func aShortAWSChunkedBodyIsRefusedAtItsEnd() {
        var machine = Machine(decodedLength: 5, checksum: nil)
        _ = machine.handle(.payload(count: 4))
        #expect(
            machine.handle(Self.complete(nil, computed: nil)) == [
                .fail(.badRequest("the aws-chunked body is shorter than x-amz-decoded-content-length"))
            ])
    }

    @Test func malformedFramingIsInvalidRequest() {
        var machine = Machine(decodedLength: 5, checksum: .crc32)
        _ = machine.handle(.payload(count: 2))
        #expect(
            machine.handle(.malformed("invalidChunkSize")) == [
                .fail(.badRequest("malformed aws-chunked body (invalidChunkSize)"))
            ])
    }

    @Test func anUndeclaredChecksumInTheTrailerIsRefused() {
        var machine = Machine(decodedLength: 1, checksum: nil)
        _ = machine.handle(.payload(count: 1))
        let event = Machine.Event.complete(trailerChecksum: nil, computed: nil, undeclaredChecksum: true)
        #expect(machine.handle(event).first.map { if case .fail = $0 { true } else { false } } == true)
    }

    @Test func bytesAfterTheTrailerAreRefusedBeforeRelease() {
        var machine = Machine(decodedLength: 2, checksum: nil)
        _ = machine.handle(.payload(count: 2))
        _ = machine.handle(Self.complete(nil, computed: nil))
        #expect(machine.handle(.bytesAfterEnd) == [.fail(.badRequest("bytes follow the aws-chunked trailer"))])
        #expect(machine.handle(.clientBodyEnded) == [])
    }
}

/// Re-framing a decoded payload into fixed-size unsigned aws-chunked chunks.
@Suite struct AWSChunkedFramerTests {
    @Test func framesInFixedChunksWhateverPiecesArrive() {
        var framer = AWSChunkedFramer(decodedLength: 10, chunkSize: 4)
        #expect(framer.next(3) == (header: 4, take: 3, closesChunk: false))
        #expect(framer.next(5) == (header: nil, take: 1, closesChunk: true))
        #expect(framer.next(4) == (header: 4, take: 4, closesChunk: true))
        #expect(framer.next(2) == (header: 2, take: 2, closesChunk: true))
        #expect(framer.framed == 10)
    }
}
