module example.com/permissive

go 1.22
