package cli

import (
	"errors"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jetbake/jetbake/computecap"
)

// flagParseError words an error of cobra's flag parsing as one sentence
// with the flag, the value and the fix, in jetbake's words rather than
// pflag's, strconv's or time's, and makes it bad usage (exit status 2).
func flagParseError(cmd *cobra.Command, err error) error {
	help := "run '" + cmd.CommandPath() + " --help'"
	var notExist *pflag.NotExistError
	var invalid *pflag.InvalidValueError
	var required *pflag.ValueRequiredError
	switch {
	case errors.As(err, &notExist) && isMatrixFlag(notExist.GetSpecifiedName()):
		return usageErrorf("%s reads no matrix: -f/--file and --allow are not its flags; %s", cmd.CommandPath(), help)
	case errors.As(err, &invalid):
		return usageErrorf("%s; %s", invalidValue(invalid.GetFlag(), invalid.GetValue(), invalid.Unwrap()), help)
	case errors.As(err, &required):
		return usageErrorf("--%s needs a value; %s", required.GetFlag().Name, help)
	}
	return usageErrorf("%w; %s", err, help)
}

// isMatrixFlag reports whether name (as given, without dashes) is one of
// the flags of AddMatrixFlags.
func isMatrixFlag(name string) bool {
	return name == "f" || name == MatrixFlag || name == matrixFlagOld || name == AllowFlag
}

// invalidValue says what is wrong with value for fl, by the flag's type.
func invalidValue(fl *pflag.Flag, value string, cause error) string {
	name := "--" + fl.Name + " " + computecap.QuoteShort(value)
	switch fl.Value.Type() {
	case "duration":
		if _, err := strconv.ParseFloat(value, 64); err == nil {
			return name + ": a duration needs a unit, e.g. " + value + "s or 2m"
		}
		return name + ": not a duration: write a number and a unit (ms, s, m, h), e.g. 30s or 5m"
	case "bool":
		return name + ": give true or false, or the flag alone for true"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "count":
		if errors.Is(cause, strconv.ErrRange) {
			return name + ": the number is too large"
		}
		return name + ": give a whole number, e.g. 4"
	case "stringSlice":
		return name + ": give values separated by commas, a value with a comma in double quotes"
	}
	// jetbake's own flag values say what they want in their own words.
	return name + ": " + cause.Error()
}
