import NIOPosix

extension ThreadSpecificVariable {
    /// This thread's value, made with `make` and kept on first use.
    func current(orMake make: () -> Value) -> Value {
        if let existing = currentValue { return existing }
        let made = make()
        currentValue = made
        return made
    }
}
