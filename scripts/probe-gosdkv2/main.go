// probe-gosdkv2: one PutObject of 100000 bytes with the AWS SDK for Go v2 as Debian packages it
// (golang-github-aws-aws-sdk-go-v2-dev), placeholder keys, path-style, to the endpoint URL given; for
// scripts/probe_client_uploads.py (which client sends what). Build: GO111MODULE=off GOPATH=/usr/share/gocode go build.
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func main() {
	client := s3.New(s3.Options{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("PLACEHOLDER", "placeholder", ""),
		EndpointResolver: s3.EndpointResolverFromURL(os.Args[1]),
		UsePathStyle:     true,
	})
	_, err := client.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String("probe-bucket"), Key: aws.String("probe"), Body: bytes.NewReader(make([]byte, 100000)),
	})
	fmt.Println(err)
}
