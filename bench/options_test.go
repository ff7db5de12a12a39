package main

import "testing"

func TestScenariosFilter(t *testing.T) {
	o, err := parseFlags([]string{"-scenarios", "sweep, segment delete"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"sweep": true, "segment delete": true, "push b100 p1": false, "tier drop": false,
	} {
		if got := o.wants(name); got != want {
			t.Errorf("wants(%q) = %v with -scenarios %q, want %v", name, got, o.Scenarios, want)
		}
	}
	all, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !all.wants("tier drop") {
		t.Error("without -scenarios every step must run")
	}
}
