module example.com/nolicense

go 1.22
