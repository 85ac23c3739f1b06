package cacheserver

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/md5" //nolint:gosec // Azure's Content-MD5, not a security check
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jetbake/jetbake/builder/internal/statuswriter"
)

// The entries' content lives in Azure Blob Storage, which GitHub's service
// hands out signed URLs (service SAS) for: one blob, read (sp=r) or create
// and write (sp=cw), until an expiry. The stand-in serves them on the same
// port, path-style, as Azurite does; it speaks what the clients of that
// side use: Put Blob (x-ms-blob-type: BlockBlob, OpenDAL's azblob writer in
// sccache), Put Block and Put Block List (the Azure SDK's UploadStream, in
// BuildKit's gha cache) and Get Blob, whole or a range (x-ms-range, else
// Range), with the headers Azure answers with (x-ms-request-id, ETag,
// Last-Modified, Content-Range, ...) and Azure's XML errors. An upload URL
// writes until its entry is finalized.
const (
	blobPrefix   = "/actions-cache/"
	azureVersion = "2025-05-05" // x-ms-version, when a request names none
	sasRead      = "r"
	sasWrite     = "cw"
	sasLifetime  = time.Hour
)

// blockBlob is a block blob: its content once committed, the blocks
// committed in it and those staged for the next Put Block List.
type blockBlob struct {
	exists                 bool
	data                   []byte
	created, modified      time.Time
	committed, uncommitted map[string][]byte
}

// blobURL is the signed URL of an entry's blob with a permission.
func (g *GHA) blobURL(id, perm string) string {
	name := hex.EncodeToString([]byte(id))
	q := url.Values{"sv": {azureVersion}, "sr": {"b"}, "sp": {perm}, "se": {now().Add(sasLifetime).Format(time.RFC3339)}}
	q.Set("sig", g.sasSignature(name, q))
	return strings.TrimSuffix(g.URL, "/") + blobPrefix + name + "?" + q.Encode()
}

func (g *GHA) sasSignature(name string, q url.Values) string {
	mac := hmac.New(sha256.New, g.sasKey)
	fmt.Fprintf(mac, "%s\n%s\n%s\n%s", name, q.Get("sp"), q.Get("se"), q.Get("sv"))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// blob answers a request to an entry's blob.
func (g *GHA) blob(w *statuswriter.Writer, r *http.Request, name string, body []byte) {
	q := r.URL.Query()
	call := Call{Op: blobOp(r.Method, q.Get("comp"))}
	defer func() { call.Status = w.Status; g.calls = append(g.calls, call) }()
	g.requests++
	h := w.Header()
	h.Set("x-ms-request-id", fmt.Sprintf("%x-0000-4000-8000-%012x", g.sasKey[:4], g.requests))
	h.Set("x-ms-version", cmp.Or(r.Header.Get("x-ms-version"), azureVersion))
	h.Set("Server", "Windows-Azure-Blob/1.0 Microsoft-HTTPAPI/2.0")
	if code, msg, status := g.checkSAS(name, q, call.Op); code != "" {
		azureError(w, status, code, msg)
		return
	}
	idBytes, _ := hex.DecodeString(name)
	e, ok := g.entries[string(idBytes)]
	switch {
	case !ok:
		azureError(w, http.StatusNotFound, "BlobNotFound", "The specified blob does not exist.")
	case call.Op == "Get Blob":
		call.Range = cmp.Or(r.Header.Get("x-ms-range"), r.Header.Get("Range"))
		getBlob(w, r, &e.blob)
	case e.finalized:
		azureError(w, http.StatusForbidden, "AuthorizationPermissionMismatch", "This request is not authorized to perform this operation using this permission.")
	default:
		putBlob(w, r, call.Op, &e.blob, body)
	}
}

// blobOp names the Azure operation of a request.
func blobOp(method, comp string) string {
	switch {
	case method == http.MethodGet || method == http.MethodHead:
		return "Get Blob"
	case method != http.MethodPut:
		return method
	case comp == "block":
		return "Put Block"
	case comp == "blocklist":
		return "Put Block List"
	case comp == "":
		return "Put Blob"
	}
	return "PUT comp=" + comp
}

// checkSAS checks a blob URL's signature, expiry and permission, as Azure
// does: an Azure error code, its message and status when it fails.
func (g *GHA) checkSAS(name string, q url.Values, op string) (code, msg string, status int) {
	expiry, err := time.Parse(time.RFC3339, q.Get("se"))
	if !hmac.Equal([]byte(q.Get("sig")), []byte(g.sasSignature(name, q))) || err != nil || now().After(expiry) {
		return "AuthenticationFailed", "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.", http.StatusForbidden
	}
	need := "w"
	switch op {
	case "Get Blob":
		need = "r"
	case "Put Blob", "Put Block", "Put Block List":
	default:
		return "UnsupportedHttpVerb", "The resource doesn't support specified Http Verb.", http.StatusMethodNotAllowed
	}
	if !strings.Contains(q.Get("sp"), need) {
		return "AuthorizationPermissionMismatch", "This request is not authorized to perform this operation using this permission.", http.StatusForbidden
	}
	return "", "", 0
}

// putBlob writes a block blob: Put Blob, Put Block or Put Block List.
func putBlob(w http.ResponseWriter, r *http.Request, op string, b *blockBlob, body []byte) {
	switch op {
	case "Put Blob":
		if t := r.Header.Get("x-ms-blob-type"); t != "BlockBlob" {
			azureError(w, http.StatusBadRequest, "MissingRequiredHeader", "An HTTP header that's mandatory for this request is not specified: x-ms-blob-type.")
			return
		}
		b.commit(body, nil)
	case "Put Block":
		id := r.URL.Query().Get("blockid")
		if raw, err := base64.StdEncoding.DecodeString(id); err != nil || len(raw) == 0 || len(raw) > 64 {
			azureError(w, http.StatusBadRequest, "InvalidQueryParameterValue", fmt.Sprintf("Value for one of the query parameters specified in the request URI is invalid: blockid=%q.", id))
			return
		}
		if b.uncommitted == nil {
			b.uncommitted = map[string][]byte{}
		}
		b.uncommitted[id] = body
	case "Put Block List":
		data, blocks, err := b.blockList(body)
		if err != nil {
			azureError(w, http.StatusBadRequest, "InvalidBlockList", "The specified block list is invalid: "+err.Error())
			return
		}
		b.commit(data, blocks)
	default:
		azureError(w, http.StatusBadRequest, "InvalidQueryParameterValue", "Value for one of the query parameters specified in the request URI is invalid: comp.")
		return
	}
	h := w.Header()
	if op != "Put Block List" {
		sum := md5.Sum(body) //nolint:gosec // Azure's Content-MD5
		h.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	}
	if op != "Put Block" {
		h.Set("ETag", b.etag())
		h.Set("Last-Modified", b.modified.Format(http.TimeFormat))
	}
	h.Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusCreated)
}

func (b *blockBlob) commit(data []byte, blocks map[string][]byte) {
	b.modified = now()
	if !b.exists {
		b.created = b.modified
	}
	b.exists, b.data, b.committed, b.uncommitted = true, data, blocks, nil
}

func (b *blockBlob) etag() string { return fmt.Sprintf(`"0x%X"`, b.modified.UnixNano()) }

// blockList reads Put Block List's XML (Committed, Uncommitted and Latest
// elements, in the order of the blob) and returns the content and blocks.
func (b *blockBlob) blockList(body []byte) ([]byte, map[string][]byte, error) {
	var list struct {
		XMLName xml.Name `xml:"BlockList"`
		Blocks  []struct {
			XMLName xml.Name
			ID      string `xml:",chardata"`
		} `xml:",any"`
	}
	if err := xml.Unmarshal(body, &list); err != nil {
		return nil, nil, err
	}
	var data bytes.Buffer
	blocks := map[string][]byte{}
	for _, blk := range list.Blocks {
		staged, isStaged := b.uncommitted[blk.ID]
		old, isCommitted := b.committed[blk.ID]
		var block []byte
		switch kind := blk.XMLName.Local; {
		case (kind == "Uncommitted" || kind == "Latest") && isStaged:
			block = staged
		case (kind == "Committed" || kind == "Latest") && isCommitted:
			block = old
		default:
			return nil, nil, fmt.Errorf("no %s block %q", strings.ToLower(kind), blk.ID)
		}
		blocks[blk.ID] = block
		data.Write(block)
	}
	return data.Bytes(), blocks, nil
}

// getBlob answers Get Blob: the whole blob or the range asked for in
// x-ms-range (which Azure prefers) or Range, through net/http's range
// handling (206 with Content-Range, 416 past the end).
func getBlob(w http.ResponseWriter, r *http.Request, b *blockBlob) {
	if !b.exists {
		azureError(w, http.StatusNotFound, "BlobNotFound", "The specified blob does not exist.")
		return
	}
	if rng := r.Header.Get("x-ms-range"); rng != "" {
		r.Header.Set("Range", rng)
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("ETag", b.etag())
	h.Set("x-ms-blob-type", "BlockBlob")
	h.Set("x-ms-creation-time", b.created.Format(http.TimeFormat))
	h.Set("x-ms-lease-state", "available")
	h.Set("x-ms-lease-status", "unlocked")
	h.Set("x-ms-server-encrypted", "true")
	http.ServeContent(w, r, "", b.modified, bytes.NewReader(b.data))
}

// azureError writes an error as Azure Storage does: its code in
// x-ms-error-code and an XML body.
func azureError(w http.ResponseWriter, status int, code, msg string) {
	var body bytes.Buffer
	body.WriteString(xml.Header)
	_ = xml.NewEncoder(&body).Encode(struct {
		XMLName xml.Name `xml:"Error"`
		Code    string
		Message string
	}{Code: code, Message: msg + "\nRequestId:" + w.Header().Get("x-ms-request-id") + "\nTime:" + now().Format(time.RFC3339Nano)})
	w.Header().Set("x-ms-error-code", code)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = w.Write(body.Bytes())
}
