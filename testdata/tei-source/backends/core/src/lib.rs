// Stand-in (jetbake test data): no Rust is compiled.
