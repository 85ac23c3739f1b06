package cacheserver

import (
	"fmt"
	"mime"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The cache service's twirp API, as actions/toolkit's
// packages/cache/src/generated/results/api/v1/cache.ts declares it (the
// messages of github/actions/results/api/v1/cache.proto).
const (
	twirpPackage = "github.actions.results.api.v1"
	// twirpPrefix is the methods' path, after ACTIONS_RESULTS_URL.
	twirpPrefix = "/twirp/" + twirpPackage + ".CacheService/"

	methodCreate   = "CreateCacheEntry"
	methodFinalize = "FinalizeCacheEntryUpload"
	methodDownload = "GetCacheEntryDownloadURL"

	encodingJSON     = "json"
	encodingProtobuf = "protobuf"
)

// cacheMessages are the request and answer messages of the methods,
// described at run time: the server decodes and encodes them with
// protobuf's own libraries (proto and protojson, as a twirp server's
// generated code does) rather than a decoder of its own. Each request's
// metadata (field 1, the scope a client claims) is left undeclared: the
// service takes the scopes from the runtime token, and an undeclared
// field is kept as unknown (protobuf) or discarded (JSON), as twirp does.
func cacheMessages() (map[string]protoreflect.MessageDescriptor, error) {
	str, i64, boolean := descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_INT64, descriptorpb.FieldDescriptorProto_TYPE_BOOL
	type field struct {
		name     string
		num      int32
		typ      descriptorpb.FieldDescriptorProto_Type
		repeated bool
	}
	messages := []struct {
		name   string
		fields []field
	}{
		{methodCreate + "Request", []field{{"key", 2, str, false}, {"version", 3, str, false}}},
		{methodCreate + "Response", []field{{"ok", 1, boolean, false}, {"signed_upload_url", 2, str, false}, {"message", 3, str, false}}},
		{methodFinalize + "Request", []field{{"key", 2, str, false}, {"size_bytes", 3, i64, false}, {"version", 4, str, false}}},
		{methodFinalize + "Response", []field{{"ok", 1, boolean, false}, {"entry_id", 2, i64, false}, {"message", 3, str, false}}},
		{methodDownload + "Request", []field{{"key", 2, str, false}, {"restore_keys", 3, str, true}, {"version", 4, str, false}}},
		{methodDownload + "Response", []field{{"ok", 1, boolean, false}, {"signed_download_url", 2, str, false}, {"matched_key", 3, str, false}}},
	}
	file := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("github/actions/results/api/v1/cache.proto"),
		Package: proto.String(twirpPackage),
		Syntax:  proto.String("proto3"),
	}
	for _, m := range messages {
		msg := &descriptorpb.DescriptorProto{Name: proto.String(m.name)}
		for _, f := range m.fields {
			label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
			if f.repeated {
				label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
			}
			msg.Field = append(msg.Field, &descriptorpb.FieldDescriptorProto{
				Name: proto.String(f.name), Number: proto.Int32(f.num), Type: f.typ.Enum(), Label: label.Enum()})
		}
		file.MessageType = append(file.MessageType, msg)
	}
	fd, err := protodesc.NewFile(file, nil)
	if err != nil {
		return nil, fmt.Errorf("cache.proto: %w", err)
	}
	out := map[string]protoreflect.MessageDescriptor{}
	for i := range fd.Messages().Len() {
		m := fd.Messages().Get(i)
		out[string(m.Name())] = m
	}
	return out, nil
}

// twirpEncoding is a request's encoding from its Content-Type, as twirp
// reads it (parameters such as charset ignored), "" for another type.
func twirpEncoding(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	switch mt {
	case "application/json":
		return encodingJSON
	case "application/protobuf":
		return encodingProtobuf
	}
	return ""
}

// message is a decoded request or an answer being built.
type message struct{ *dynamicpb.Message }

func newMessage(desc protoreflect.MessageDescriptor) message {
	return message{dynamicpb.NewMessage(desc)}
}

func (m message) field(name string) protoreflect.FieldDescriptor {
	return m.Descriptor().Fields().ByName(protoreflect.Name(name))
}

func (m message) str(name string) string { return m.Get(m.field(name)).String() }

func (m message) int(name string) int64 { return m.Get(m.field(name)).Int() }

func (m message) strs(name string) []string {
	l := m.Get(m.field(name)).List()
	out := make([]string, l.Len())
	for i := range out {
		out[i] = l.Get(i).String()
	}
	return out
}

// set sets fields: string, bool or int64 values.
func (m message) set(fields map[string]any) message {
	for name, v := range fields {
		m.Set(m.field(name), protoreflect.ValueOf(v))
	}
	return m
}

// decodeMessage reads body, in encoding, as a message of desc: JSON as
// twirp's protojson options do (proto or JSON field names, unknown fields
// discarded), protobuf with the unknown fields kept.
func decodeMessage(desc protoreflect.MessageDescriptor, encoding string, body []byte) (message, error) {
	m := newMessage(desc)
	if encoding == encodingJSON {
		return m, protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(body, m)
	}
	return m, proto.Unmarshal(body, m)
}

// encodeMessage writes an answer as twirp does: JSON with the proto field
// names and every field, the unset ones with their zero values (int64 as
// a string, protojson's rule), or protobuf.
func encodeMessage(m message, encoding string) ([]byte, error) {
	if encoding == encodingJSON {
		return protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
	}
	return proto.Marshal(m)
}
