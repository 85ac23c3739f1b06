// Stand-in (jetbake test data). TEI's router build script records the git
// commit for /info: from the repository when there is one, else from the
// GIT_SHA variable of the build.
fn main() {
    if let Ok(sha) = std::env::var("GIT_SHA") {
        println!("cargo:rustc-env=VERGEN_GIT_SHA={sha}");
    }
}
