"""End-to-end test harness for presignd: real local servers started as subprocesses on loopback.

Modules:
- process:   managed subprocesses (own process group, always killed on teardown or interpreter exit)
- net:       free loopback ports, waiting for a port or an HTTP endpoint
- tls:       TestCA, a throwaway CA and server certificates made with the openssl CLI
- moto:      MotoServer, a signature-verifying S3 server with authentication turned on
- nginx:     NginxTLSFront, nginx terminating TLS in front of moto (good, untrusted-CA and wrong-name certs)
- recorder:  VerifyingUpstreamRecorder, a plain-HTTP upstream that records and re-verifies SigV4
- presignd:  Presignd, the daemon under test (config writer, start, listening-line parser, stop)
- clients:   unsigned boto3 client, isolated awscli and curl runners
- s3xml:     S3 error XML parsing
- logfmt:    logfmt line parser
- procfs:    /proc/PID/status memory fields, peak-RSS reset, descriptor counts (tests and scripts/bench_*.py)
"""
