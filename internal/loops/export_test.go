package loops

// SetUseVector switches the assembly loops on or off and returns the
// previous setting.
func SetUseVector(on bool) bool {
	prev := useVector
	useVector = on
	return prev
}
