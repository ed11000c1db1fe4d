module simplecpp

go 1.19
