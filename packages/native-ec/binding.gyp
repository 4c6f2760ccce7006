{
  "targets": [
    {
      "target_name": "native_ec",
      "sources": ["native/native_ec.c"],
      "defines": ["OPENSSL_SUPPRESS_DEPRECATED"],
      "cflags": ["-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
    }
  ]
}
