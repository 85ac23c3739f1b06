package matrix

// The functions here copy a checked tree into a Matrix. They are lenient
// like json.Unmarshal: a value of the wrong type becomes the zero value (the
// shape check has reported it), and list items keep their index so that
// later errors name the right path.

// fillMatrix builds a Matrix from the tree of a matrix file.
func fillMatrix(root *node) Matrix {
	m := Matrix{Schema: root.str("$schema")}
	if r := root.object("router"); r != nil {
		m.Router = Router{
			Name: r.str("name"), Version: r.str("version"), Context: r.str("context"),
			Dockerfile: r.str("dockerfile"), Target: r.str("target"), Output: r.str("output"),
			Smoke: r.strs("smoke"), BuildArgs: r.strMap("build_args"), TargetBuildArgs: r.strMaps("target_build_args"),
			Env: r.strMap("env"), Cmd: r.strs("cmd"), Ports: r.strs("ports"),
		}
	}
	if im := root.object("image"); im != nil {
		m.Image = Image{
			Repository: im.str("repository"), Source: im.str("source"), Tags: im.strs("tags"),
			Labels: im.strMap("labels"), Annotations: im.strMap("annotations"),
		}
	}
	if list, ok := root.member("releases"); ok && list.kind == kindArray {
		m.Releases = make([]Release, len(list.values))
		for i, item := range list.values {
			if item.kind == kindObject {
				m.Releases[i] = fillRelease(item)
			}
		}
	}
	return m
}

// fillRelease builds a Release from its object.
func fillRelease(n *node) Release {
	return Release{
		Name: n.str("name"), JetPack: n.str("jetpack"), L4T: n.str("l4t"), CUDA: n.str("cuda"),
		Ubuntu: n.str("ubuntu"), BuildBase: n.str("build_base"), RuntimeBase: n.str("runtime_base"),
		Targets: n.strs("targets"), Tier: n.str("tier"), Hardware: n.strs("hardware"),
		Tags: n.strs("tags"), BuildArgs: n.strMap("build_args"), TargetBuildArgs: n.strMaps("target_build_args"),
	}
}

// object returns the member key when it is an object, or nil.
func (n *node) object(key string) *node {
	if v, ok := n.member(key); ok && v.kind == kindObject {
		return v
	}
	return nil
}

// str returns the member key when it is a string, or "".
func (n *node) str(key string) string {
	if v, ok := n.member(key); ok && v.kind == kindString {
		return v.text
	}
	return ""
}

// strs returns the member key as a list of strings; items that are not
// strings become "". A missing or non-list member gives nil.
func (n *node) strs(key string) []string {
	v, ok := n.member(key)
	if !ok || v.kind != kindArray {
		return nil
	}
	out := make([]string, len(v.values))
	for i, item := range v.values {
		if item.kind == kindString {
			out[i] = item.text
		}
	}
	return out
}

// strMap returns the member key as a map of strings, leaving out values that
// are not strings. A missing or non-object member gives nil.
func (n *node) strMap(key string) map[string]string {
	v, ok := n.member(key)
	if !ok || v.kind != kindObject {
		return nil
	}
	return v.stringMap()
}

// stringMap returns an object's string members.
func (v *node) stringMap() map[string]string {
	out := make(map[string]string, len(v.keys))
	for i, k := range v.keys {
		if v.values[i].kind == kindString {
			out[k] = v.values[i].text
		}
	}
	return out
}

// strMaps returns the member key as a map of string maps, leaving out
// values that are not objects. A missing or non-object member gives nil.
func (n *node) strMaps(key string) map[string]map[string]string {
	v, ok := n.member(key)
	if !ok || v.kind != kindObject {
		return nil
	}
	out := make(map[string]map[string]string, len(v.keys))
	for i, k := range v.keys {
		if v.values[i].kind == kindObject {
			out[k] = v.values[i].stringMap()
		}
	}
	return out
}
