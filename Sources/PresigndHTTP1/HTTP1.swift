public enum HTTP1 {}
