package main

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/jetbake/jetbake/builder/internal/standin"
)

// standinLabel is the config label in which a stand-in base names the
// real image it stands for (standin.Kit.Image): the only thing that tells
// apart the stand-ins of a synthetic matrix's clones, whose layers are the
// same.
const standinLabel = "io.jetbake.standin"

// standins makes each stand-in base's layer once per bench and pushes it
// to every round's registries, as e2e.Env.PushStandins pushes them one by
// one. A stand-in cross build base (Debian's cross compiler, about 150 MiB
// of files) takes half a minute to make on a loaded 2-core machine, and a
// matrix of 20 releases names 20 of them for each tool, path and round.
// Clones of one template get the template's image with their own label,
// so that each is still its own image (its own cache key in BuildKit, its
// own router builds), as standin.Kit.Image makes it.
type standins struct {
	kit    standin.Kit
	mu     sync.Mutex
	images map[string]v1.Image // by the Base without its Ref
}

func newStandins(kit standin.Kit) *standins {
	return &standins{kit: kit, images: map[string]v1.Image{}}
}

// image is the stand-in of b, as kit.Image(ctx, b) makes it.
func (s *standins) image(ctx context.Context, b standin.Base) (v1.Image, error) {
	shape := b
	shape.Ref = ""
	key := fmt.Sprintf("%#v", shape)
	s.mu.Lock()
	defer s.mu.Unlock()
	img, ok := s.images[key]
	if !ok {
		var err error
		if img, err = s.kit.Image(ctx, b); err != nil {
			return nil, err
		}
		s.images[key] = img
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	if cf.Config.Labels[standinLabel] == b.Ref {
		return img, nil
	}
	cf = cf.DeepCopy()
	cf.Config.Labels = maps.Clone(cf.Config.Labels)
	cf.Config.Labels[standinLabel] = b.Ref
	return mutate.ConfigFile(img, cf)
}

// push pushes the stand-in of each of bases to registry, as
// e2e.Env.PushStandins does (standin.Kit.Push).
func (s *standins) push(ctx context.Context, registry string, bases []standin.Base) error {
	for _, b := range bases {
		if err := s.pushOne(ctx, registry, b); err != nil {
			return fmt.Errorf("push stand-in for %s: %w", b.Ref, err)
		}
	}
	return nil
}

func (s *standins) pushOne(ctx context.Context, registry string, b standin.Base) error {
	src, err := name.ParseReference(b.Ref)
	if err != nil {
		return err
	}
	img, err := s.image(ctx, b)
	if err != nil {
		return err
	}
	dst, err := name.ParseReference(registry+"/"+src.Context().RepositoryStr()+":"+src.Identifier(), name.Insecure)
	if err != nil {
		return err
	}
	if !b.Index {
		return remote.Write(dst, img, remote.WithContext(ctx))
	}
	platform := b.Platform()
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	return remote.WriteIndex(dst, idx, remote.WithContext(ctx))
}
