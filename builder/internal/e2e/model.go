package e2e

import (
	"os"
	"path/filepath"
	"strconv"
)

// ModelHiddenSize is the hidden size of the test model, BAAI/bge-small-en-v1.5's.
const ModelHiddenSize = 384

// WriteModel writes a small embedding model's folder at dir as TEI reads a
// local one: config.json (a BERT model of ModelHiddenSize, 512 positions),
// tokenizer.json and a stand-in for the weights (model.safetensors), each
// file named in omit left out.
func WriteModel(dir string, omit ...string) error {
	files := map[string]string{
		"config.json": `{"architectures": ["BertModel"], "model_type": "bert", "hidden_size": ` + strconv.Itoa(ModelHiddenSize) +
			`, "num_hidden_layers": 12, "max_position_embeddings": 512}` + "\n",
		"tokenizer.json":    `{"version": "1.0", "model": {"type": "WordPiece", "unk_token": "[UNK]"}}` + "\n",
		"model.safetensors": "stand-in weights\n",
	}
	for _, name := range omit {
		delete(files, name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ServeArgs are the probe's arguments of the serving runs: every check,
// the serving check on the model at /model, its load bounded by load.
// They follow the image of a run whose entrypoint is jetbake-probe
// (ProbeEntrypoint).
func ServeArgs(load string) []string {
	return []string{"--smoke", "--kernel", "--serve", "/model", "--load-timeout", load}
}
