package nn

import (
	"fmt"
	"strings"
)

// String methods, so that a metric, an optimizer or a model printed in a
// cell reads as what it is rather than as a struct ("&{1257 2560}").

// String returns "NAME: RESULT (N values)", e.g. "loss: 0.3521 (2560 values)".
func (m *Mean) String() string {
	return fmt.Sprintf("%s (%s values)", MetricString(m), trimFloat(m.count))
}

// String returns "accuracy: RESULT (CORRECT of N examples)".
func (m *SparseCategoricalAccuracy) String() string {
	return fmt.Sprintf("%s (%s of %s examples)", MetricString(m), trimFloat(m.correct), trimFloat(m.count))
}

// String returns "precision: RESULT (threshold T, N examples)".
func (m *Precision) String() string { return m.describe(MetricString(m)) }

// String returns "recall: RESULT (threshold T, N examples)".
func (m *Recall) String() string { return m.describe(MetricString(m)) }

func (m *binaryMetric) describe(head string) string {
	n := m.c.tp + m.c.fp + m.c.fn + m.c.tn
	return fmt.Sprintf("%s (threshold %g, %s examples)", head, m.c.threshold, trimFloat(n))
}

// String returns "auc: RESULT (N thresholds, M examples)".
func (m *AUC) String() string {
	n := 0.0
	for k := range m.pos {
		n += m.pos[k] + m.neg[k]
	}
	return fmt.Sprintf("%s (%d thresholds, %s examples)", MetricString(m), len(m.thresholds), trimFloat(n))
}

// trimFloat prints a count kept as a float64 (weights may make it
// fractional) without a needless ".0".
func trimFloat(v float64) string { return fmt.Sprintf("%g", v) }

// describe writes an optimizer as "TYPE(NAME: FIELDS; N updates)", with the
// learning rate, or the schedule, first.
func (o *optimizer) describe(kind string, lr float64, fields ...any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s(%s: ", kind, o.name)
	if o.schedule != nil {
		fmt.Fprintf(&b, "lr %+v", o.schedule)
	} else {
		fmt.Fprintf(&b, "lr %g", lr)
	}
	for i := 0; i+1 < len(fields); i += 2 {
		fmt.Fprintf(&b, ", %v %v", fields[i], fields[i+1])
	}
	if o.clip > 0 {
		fmt.Fprintf(&b, ", clip norm %g", o.clip)
	}
	fmt.Fprintf(&b, "; %d updates)", o.Iterations())
	return b.String()
}

// String describes the optimizer, e.g. "SGD(sgd: lr 0.1, momentum 0.9; 12 updates)".
func (o *SGD) String() string {
	var fields []any
	if o.Momentum != 0 {
		fields = append(fields, "momentum", o.Momentum)
	}
	if o.Nesterov {
		fields = append(fields, "nesterov", true)
	}
	return o.describe("SGD", o.LR, fields...)
}

// String describes the optimizer, e.g.
// "Adam(adam: lr 0.001, β₁ 0.9, β₂ 0.999, ε 1e-07; 12 updates)".
func (o *Adam) String() string {
	return o.describe("Adam", o.LR, "β₁", o.Beta1, "β₂", o.Beta2, "ε", o.Epsilon)
}

// String describes the optimizer, as Adam's String does, with its weight decay.
func (o *AdamW) String() string {
	return o.describe("AdamW", o.LR, "β₁", o.Beta1, "β₂", o.Beta2, "ε", o.Epsilon, "weight decay", o.WeightDecay)
}

// String describes the optimizer, e.g. "RMSprop(rmsprop: lr 0.001, ρ 0.9, ε 1e-07; 12 updates)".
func (o *RMSprop) String() string {
	fields := []any{"ρ", o.Rho, "ε", o.Epsilon}
	if o.Momentum != 0 {
		fields = append(fields, "momentum", o.Momentum)
	}
	return o.describe("RMSprop", o.LR, fields...)
}

// String describes the wrapper and the optimizer it wraps, e.g.
// "Accumulate(4 steps, SGD(sgd: lr 0.1; 3 updates))".
func (a *Accumulator) String() string { return fmt.Sprintf("Accumulate(%d steps, %v)", a.k, a.opt) }

// String returns the layer's name; layers with settings worth showing have
// their own String.
func (l *layerBase) String() string { return l.name }

// String describes the layer, e.g. "Dense(dense: 16 units, relu)", with its
// input width once built.
func (d *DenseLayer) String() string {
	s := fmt.Sprintf("Dense(%s: %d units, %v", d.name, d.units, d.act)
	if !d.useB {
		s += ", no bias"
	}
	if d.kernel != nil {
		s += fmt.Sprintf(", built for width %d", d.InputWidth())
	}
	return s + ")"
}

// String describes the model in one line: its layers and, once built, its
// parameter count, e.g. "Sequential(sequential: dense, dense_1; 210 params)".
// Summary gives the table.
func (m *Sequential) String() string {
	names := make([]string, len(m.layers))
	for i, l := range m.layers {
		names[i] = l.Name()
	}
	s := fmt.Sprintf("Sequential(%s: %s", m.name, strings.Join(names, ", "))
	if !m.Built() {
		return s + "; not built)"
	}
	n := 0
	for _, v := range m.Variables() {
		n += v.Len()
	}
	return fmt.Sprintf("%s; %d params)", s, n)
}
