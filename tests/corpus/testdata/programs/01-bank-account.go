package main

import (
	"errors"
	"fmt"
)

type account struct {
	owner   string
	balance int
	history []string
}

var errInsufficient = errors.New("insufficient funds")

func (a *account) deposit(n int) {
	a.balance += n
	a.history = append(a.history, fmt.Sprintf("+%d", n))
}

func (a *account) withdraw(n int) error {
	if n > a.balance {
		return fmt.Errorf("withdraw %d from %s: %w", n, a.owner, errInsufficient)
	}
	a.balance -= n
	a.history = append(a.history, fmt.Sprintf("-%d", n))
	return nil
}

func transfer(from, to *account, n int) error {
	if err := from.withdraw(n); err != nil {
		return err
	}
	to.deposit(n)
	return nil
}

func main() {
	alice := &account{owner: "alice"}
	bob := &account{owner: "bob", balance: 50}
	alice.deposit(100)
	fmt.Println(transfer(alice, bob, 30))
	err := transfer(bob, alice, 500)
	fmt.Println(err, errors.Is(err, errInsufficient))
	fmt.Println(alice.balance, bob.balance)
	fmt.Println(alice.history, bob.history)
}
