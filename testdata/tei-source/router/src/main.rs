// Stand-in (jetbake test data): the stand-in cargo compiles no Rust. The
// router it writes is builder/internal/standin/tei/cmd/router.
fn main() {}
