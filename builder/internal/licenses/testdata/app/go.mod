// A main module that links one module of each kind: the licenses test
// scans it offline (every dependency is a folder beside it).
module example.com/app

go 1.22

require (
	example.com/copyleft v0.0.0
	example.com/nolicense v0.0.0
	example.com/permissive v0.0.0
	example.com/proprietary v0.0.0
)

replace (
	example.com/copyleft => ../modules/copyleft
	example.com/nolicense => ../modules/nolicense
	example.com/permissive => ../modules/permissive
	example.com/proprietary => ../modules/proprietary
)
