module identity

go 1.26
