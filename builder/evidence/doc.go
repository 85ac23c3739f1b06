// Package evidence keeps the proof that an exact image works on a real
// Jetson, and decides whether a release may claim the tier "supported".
//
// # Collecting
//
// `jetbake-probe --smoke --kernel --serve /model --out evidence.json`
// (ProbeCommand), run inside the image on a Jetson with
// JETBAKE_IMAGE_DIGEST set to the digest it was pulled by and a small
// embedding model's folder mounted at /model, writes an allow-listed profile
// of the image and the host and a list of named checks (see Parse for the
// schema): among them the smoke run (--version, which never touches CUDA),
// cuda-kernel (a PTX kernel JIT-compiled by the host's driver ran exact)
// and serve (the router served finite embeddings of the model's size).
//
// # Levels
//
// LevelOf says how far evidence got: smoke, cuda-kernel, or serve when
// both cuda-kernel and serve passed. A release of the tier "supported"
// needs evidence of level serve (SupportedLevel): TEI checks the compute
// capability and loads its kernels only at model load, so a smoke run
// alone can pass for an image that refuses its GPU. An app image's
// evidence (image.kind "app") needs level app instead (SupportedLevelFor):
// passing cuda-kernel and app checks, torch's own CUDA work on the GPU;
// a serve check proves nothing of torch. Other tiers take
// evidence of any level. The probe is jetbake-probe (entrypoint/probe), a
// binary of its own in every image. Package entrypoint/evidencespec, which
// imports only the standard library, defines the JSON: the probe writes
// its types and this package reads them (Evidence embeds
// evidencespec.Evidence; Image, Host, Result and the rest are aliases),
// adding the validation and the admission rules. A test parses the probe's
// golden output and writes it back byte for byte.
//
// # Which image the evidence is for
//
// Evidence names its image by digest. jetbake knows that a digest is one it
// built for a release from a Resolver: the report of `jetbake build
// --metadata-file build.json` (MetadataResolver), or the registry, where the
// image at <repository>@<digest> carries the io.jetbake.release annotation
// that jetbake puts on every index and manifest (RegistryResolver). Chain
// asks them in order.
//
// The current digest of a release is the one its latest build produced: the
// digest in the metadata file when one is given, else what the release's
// first tag resolves to in the registry now. Evidence for an older digest
// stays in the store and shows in `jetbake support`, but does not back the
// tier.
//
// # Admitting and storing
//
// Admit refuses evidence, each time with a *RefusedError whose Reason names
// the rule, when its result is not a pass (a failed or skipped check), its
// architecture is not arm64, it names no digest or a digest jetbake did not
// build, its release differs from the digest's, the host's L4T major is not
// the release's, its device class is not in the release's hardware, its
// revision differs from the image's, it is older than the age limit
// (30 days by default) or dated in the future, or the release claims
// "supported" and the evidence is below SupportedLevel. Store writes admitted evidence
// to evidence/<release>/<digest-short>-<device>-<date>.json next to the
// matrix, atomically.
//
// # Reading
//
// IssueMarkdown writes one piece of evidence as an issue body a person can
// paste; Support builds the table of every release's tier, hardware and
// evidence; CheckStrict reports each release that claims "supported" without
// passing evidence of SupportedLevel for its current digest within the
// age limit, for `jetbake validate --strict`. Support and IssueMarkdown
// show the level each piece of evidence reached.
package evidence
