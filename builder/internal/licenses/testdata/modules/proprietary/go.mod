module example.com/proprietary

go 1.22
