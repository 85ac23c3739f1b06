module example.com/copyleft

go 1.22
