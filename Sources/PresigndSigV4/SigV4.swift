public enum SigV4 {}
