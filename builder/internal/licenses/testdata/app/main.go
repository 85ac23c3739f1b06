// Command app links the fixture modules.
package main

import (
	"example.com/copyleft"
	"example.com/nolicense"
	"example.com/permissive"
	"example.com/permissive/vendored"
	"example.com/proprietary"
)

func main() {
	println(copyleft.Name, nolicense.Name, permissive.Name, vendored.Name, proprietary.Name)
}
