// signedchunks: a real S3 client library that signs its chunks (minio-go, from Debian's
// golang-github-minio-minio-go-v7-dev, built in GOPATH mode) uploads a deterministic object through presignd and
// reads it back. Over plain HTTP with keys, minio-go sends STREAMING-AWS4-HMAC-SHA256-PAYLOAD (issue 21).
//
// Usage: signedchunks -endpoint 127.0.0.1:PORT -bucket B -key K -size BYTES [-part-size BYTES] [-skip-read] [-secure]
// It prints one line: `uploaded=<bytes> sha256=<hex> read_back=<ok|skipped>`; it exits 1 on any mismatch.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// pattern is an endless deterministic byte stream (SHA-256 in counter mode), so neither side holds the object.
type pattern struct {
	counter uint64
	block   [32]byte
	used    int
	left    int64
}

func newPattern(size int64) *pattern { return &pattern{used: 32, left: size} }

func (p *pattern) Read(out []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	if int64(len(out)) > p.left {
		out = out[:p.left]
	}
	n := 0
	for n < len(out) {
		if p.used == 32 {
			var seed [8]byte
			binary.BigEndian.PutUint64(seed[:], p.counter)
			p.block = sha256.Sum256(seed[:])
			p.counter++
			p.used = 0
		}
		copied := copy(out[n:], p.block[p.used:])
		p.used += copied
		n += copied
	}
	p.left -= int64(n)
	return n, nil
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "signedchunks: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	endpoint := flag.String("endpoint", "", "presignd host:port")
	bucket := flag.String("bucket", "", "bucket")
	key := flag.String("key", "", "object key")
	size := flag.Int64("size", 0, "object size in bytes")
	partSize := flag.Uint64("part-size", 0, "multipart part size (0: single PUT up to 5 GiB)")
	skipRead := flag.Bool("skip-read", false, "do not read the object back")
	secure := flag.Bool("secure", false, "HTTPS (the CA from SSL_CERT_FILE)")
	flag.Parse()

	// Placeholder keys, as people point SDKs at a local signing proxy: presignd signs with its own.
	client, err := minio.New(*endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4("PLACEHOLDER", "placeholder-secret", ""),
		Secure:       *secure,
		Region:       "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		fail("client: %v", err)
	}
	ctx := context.Background()
	options := minio.PutObjectOptions{ContentType: "application/octet-stream", PartSize: *partSize}
	if *partSize == 0 {
		options.DisableMultipart = true
	}
	source := newPattern(*size)
	digest := sha256.New()
	info, err := client.PutObject(ctx, *bucket, *key, io.TeeReader(source, digest), *size, options)
	if err != nil {
		fail("put: %v", err)
	}
	if info.Size != *size {
		fail("put: stored %d bytes, sent %d", info.Size, *size)
	}
	sum := hex.EncodeToString(digest.Sum(nil))
	readBack := "skipped"
	if !*skipRead {
		object, err := client.GetObject(ctx, *bucket, *key, minio.GetObjectOptions{})
		if err != nil {
			fail("get: %v", err)
		}
		expected := newPattern(*size)
		got := make([]byte, 1<<20)
		want := make([]byte, 1<<20)
		var total int64
		for {
			n, err := io.ReadFull(object, got)
			if n > 0 {
				if _, err := io.ReadFull(expected, want[:n]); err != nil {
					fail("get: %d bytes more than uploaded", n)
				}
				if !bytes.Equal(got[:n], want[:n]) {
					fail("get: bytes differ in the MiB at %d", total)
				}
				total += int64(n)
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				break
			}
			if err != nil {
				fail("get: %v", err)
			}
		}
		if total != *size {
			fail("get: read %d bytes, uploaded %d", total, *size)
		}
		readBack = "ok"
	}
	fmt.Printf("uploaded=%d sha256=%s read_back=%s\n", *size, sum, readBack)
}
