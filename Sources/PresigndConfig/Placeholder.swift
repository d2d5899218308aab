public enum PresigndConfiguration {}
