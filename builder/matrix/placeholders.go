package matrix

// The values `jetbake init` writes when it is not told the user's own: a
// matrix that still holds them builds, but publishes nowhere the user owns.
const (
	// PlaceholderRepository is init's image.repository without --repository.
	PlaceholderRepository = "ghcr.io/example/router"
	// PlaceholderSource is init's image.source without --source.
	PlaceholderSource = "https://github.com/example/router"
)

// placeholderWarnings are the fields of m that still hold init's
// placeholders: warnings, not errors, since the matrix is valid and plan
// and local builds need no repository of the user's.
func placeholderWarnings(m *Matrix) []FieldError {
	var out []FieldError
	if m.Image.Repository == PlaceholderRepository {
		out = append(out, FieldError{Path: "image.repository", Value: quote(m.Image.Repository),
			Message: "is the placeholder 'jetbake init' writes: images pushed there would go to a repository that is not yours",
			Fix:     "set it to your own image repository, such as ghcr.io/ORG/NAME"})
	}
	if m.Image.Source == PlaceholderSource {
		out = append(out, FieldError{Path: "image.source", Value: quote(m.Image.Source),
			Message: "is the placeholder 'jetbake init' writes: every image's org.opencontainers.image.source would name a repository that is not yours",
			Fix:     "set it to your repository's URL, such as https://github.com/ORG/NAME"})
	}
	return out
}
