package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
)

// dockerConfigShape is what jetbake's registry calls read of the Docker
// config (go-containerregistry's keychain, through docker/cli): the
// credentials and the helpers. Other keys are Docker's.
type dockerConfigShape struct {
	Auths map[string]struct {
		Auth          string `json:"auth"`
		Username      string `json:"username"`
		Password      string `json:"password"`
		IdentityToken string `json:"identitytoken"`
		RegistryToken string `json:"registrytoken"`
	} `json:"auths"`
	CredsStore  string            `json:"credsStore"`
	CredHelpers map[string]string `json:"credHelpers"`
}

// checkDockerConfig reads the Docker config the registry calls will use
// ($DOCKER_CONFIG/config.json, else ~/.docker/config.json), when there is
// one, with the matrix's reader: a broken one is one sentence naming the
// line, the column and the field (exit 2), not Go's raw JSON error from
// the keychain in the middle of a request.
func checkDockerConfig() error {
	dir := os.Getenv("DOCKER_CONFIG")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(home, ".docker")
	}
	path := filepath.Join(dir, "config.json")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	data, err := inputfile.Read(path, "Docker config file")
	if err != nil {
		return err
	}
	var c dockerConfigShape
	_, err = matrix.DecodeFile(path, data, &c, "write it as 'docker login' does, or move it away and log in again", matrix.IgnoreUnknownFields())
	return err
}
