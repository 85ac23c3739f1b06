package host

import (
	"github.com/jetbake/jetbake/computecap"
)

// ImageFields is what the host rule needs of an image description: its L4T,
// JetPack and CUDA fields as written in /etc/jetbake/image.json or the
// matrix ("" when absent).
type ImageFields struct {
	L4T, JetPack, CUDA string
}

// Needs turns an image's fields into the host rule's input. The L4T comes
// from the l4t field, else from the JetPack (its L4T major only). compat
// lists the forward-compatibility folders the image ships: the entrypoint
// passes those present in its root (see PresentCompat), the builder those
// the table says the image's base ships (Table.ShippedCompat).
func Needs(t *computecap.Table, img ImageFields, compat []string) (computecap.ImageNeeds, error) {
	var n computecap.ImageNeeds
	switch {
	case img.L4T != "":
		v, err := computecap.ParseL4TVersion(img.L4T)
		if err != nil {
			return n, err
		}
		n.L4T = v
	case img.JetPack != "":
		major, ok := t.L4TMajorForJetPack(img.JetPack)
		if !ok {
			return n, &UnknownJetPackError{JetPack: img.JetPack}
		}
		n.L4T = computecap.L4TVersion{Major: major}
	}
	if img.CUDA != "" {
		v, err := computecap.ParseCUDAVersion(img.CUDA)
		if err != nil {
			return n, err
		}
		n.CUDA = v
	}
	n.CompatDirs = compat
	return n, nil
}

// UnknownJetPackError reports an image whose JetPack the table lacks and
// whose L4T is not given.
type UnknownJetPackError struct {
	// JetPack is the image's jetpack field.
	JetPack string
}

// Error names the JetPack and the fix.
func (e *UnknownJetPackError) Error() string {
	return "jetpack " + computecap.QuoteShort(e.JetPack) + " is not a JetPack release this table knows, and l4t is empty"
}

// PresentCompat lists the forward-compatibility folders of the table's
// SoC rows that exist under root (an image's file system).
func PresentCompat(t *computecap.Table, root Root) []string {
	var dirs []string
	for _, s := range t.SoCs {
		for _, fc := range s.ForwardCompat {
			if root.IsDir(fc.Dir) {
				dirs = append(dirs, fc.Dir)
			}
		}
	}
	return dirs
}
