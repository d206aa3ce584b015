package cells

// Gold reports whether t links cells with gold; SetGold sets it.
func Gold(t *Toolchain) bool        { return t.gold.Load() }
func SetGold(t *Toolchain, on bool) { t.gold.Store(on) }
