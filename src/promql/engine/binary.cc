// Binary operators: scalar/scalar, vector/scalar and vector/vector with
// one-to-one, many-to-one, one-to-many and set (many-to-many) matching,
// following Prometheus's VectorBinop/VectorAnd/VectorOr/VectorUnless,
// including their error messages for ambiguous matches.
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

#include "promql/engine/evaluator.h"

namespace gpumon::promql::engine_internal {
namespace {

bool ChangesMetricSchema(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
    case BinaryOp::kSub:
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kMod:
    case BinaryOp::kPow:
    case BinaryOp::kAtan2:
      return true;
    default:
      return false;
  }
}

// Value of `l op r`; *keep says whether a comparison holds (always true for
// arithmetic). Comparisons yield the left value.
double ElemBinop(BinaryOp op, double l, double r, bool* keep) {
  *keep = true;
  switch (op) {
    case BinaryOp::kAdd:
      return l + r;
    case BinaryOp::kSub:
      return l - r;
    case BinaryOp::kMul:
      return l * r;
    case BinaryOp::kDiv:
      return l / r;
    case BinaryOp::kPow:
      return std::pow(l, r);
    case BinaryOp::kMod:
      return std::fmod(l, r);
    case BinaryOp::kAtan2:
      return std::atan2(l, r);
    case BinaryOp::kEql:
      *keep = l == r;
      return l;
    case BinaryOp::kNeq:
      *keep = l != r;
      return l;
    case BinaryOp::kGtr:
      *keep = l > r;
      return l;
    case BinaryOp::kLss:
      *keep = l < r;
      return l;
    case BinaryOp::kGte:
      *keep = l >= r;
      return l;
    case BinaryOp::kLte:
      *keep = l <= r;
      return l;
    default:
      FailExec(std::string("operator \"") + BinaryOpName(op) + "\" not allowed here");
  }
}

// The join signature of a series: the labels a match compares.
std::string Signature(const Labels& l, bool on, const std::vector<std::string>& names) {
  std::string key;
  for (const auto& x : l) {
    const bool listed = std::find(names.begin(), names.end(), x.name) != names.end();
    if (on ? listed : (!listed && x.name != kMetricName)) {
      key.append(x.name);
      key.push_back('\xff');
      key.append(x.value);
      key.push_back('\xff');
    }
  }
  return key;
}

// The per-step values of one side: series index and value.
struct Item {
  int series;
  double f;
};

void Gather(const Matrix& m, StepCursor& cur, int64_t ts, std::vector<Item>& out) {
  out.clear();
  double f;
  for (size_t i = 0; i < m.size(); ++i) {
    if (cur.At(i, ts, &f)) out.push_back(Item{static_cast<int>(i), f});
  }
}

}  // namespace

Matrix Evaluator::EvalBinary(const Binary& b) {
  const int64_t before = ctx_.current_samples;
  const ValueType lt = b.lhs->Type();
  const ValueType rt = b.rhs->Type();
  Matrix res;
  if (lt == ValueType::kScalar && rt == ValueType::kScalar) {
    const std::vector<double> l = EvalScalarSteps(*b.lhs);
    const std::vector<double> r = EvalScalarSteps(*b.rhs);
    res.resize(1);
    res[0].points.reserve(ReserveFor(static_cast<int64_t>(l.size())));
    size_t step = 0;
    for (int64_t ts = start_; ts <= end_; ts += interval_, ++step) {
      ctx_.Poll();
      ctx_.AddSample();
      bool keep;
      double v = ElemBinop(b.op, l[step], r[step], &keep);
      if (IsComparison(b.op)) v = keep ? 1 : 0;
      res[0].points.push_back(FPoint{ts, v});
    }
  } else if (lt == ValueType::kVector && rt == ValueType::kVector) {
    Matrix l = Eval(*b.lhs);
    Matrix r = Eval(*b.rhs);
    res = EvalVectorVector(b, std::move(l), std::move(r));
  } else if (lt == ValueType::kVector) {
    Matrix l = Eval(*b.lhs);
    res = EvalVectorScalar(b, std::move(l), EvalScalarSteps(*b.rhs), /*scalar_left=*/false);
  } else {
    const std::vector<double> l = EvalScalarSteps(*b.lhs);
    res = EvalVectorScalar(b, Eval(*b.rhs), l, /*scalar_left=*/true);
  }
  ctx_.SetSamples(before + TotalPoints(res));
  return res;
}

Matrix Evaluator::EvalVectorScalar(const Binary& b, Matrix vec, const std::vector<double>& scalar,
                                   bool scalar_left) {
  const bool comparison = IsComparison(b.op);
  const bool drop_name = ChangesMetricSchema(b.op) || b.return_bool;
  for (auto& s : vec) {
    ctx_.Poll(1 + static_cast<int64_t>(s.points.size()));
    size_t dst = 0;
    for (const FPoint& p : s.points) {
      const double sv = scalar[static_cast<size_t>((p.t - start_) / interval_)];
      double lf = p.f, rf = sv;
      if (scalar_left) std::swap(lf, rf);
      bool keep;
      double v = ElemBinop(b.op, lf, rf, &keep);
      // The vector's value is the result of a filter, whichever side it is on.
      if (comparison && scalar_left) v = rf;
      if (b.return_bool) {
        v = keep ? 1 : 0;
        keep = true;
      }
      if (keep) s.points[dst++] = FPoint{p.t, v};
    }
    s.points.resize(dst);
    if (drop_name) s.metric = DropMetricName(s.metric);
  }
  std::erase_if(vec, [](const Series& s) { return s.points.empty(); });
  if (drop_name) vec = MergeSameLabelset(std::move(vec));
  return vec;
}

Matrix Evaluator::EvalVectorVector(const Binary& b, Matrix lhs, Matrix rhs) {
  static const VectorMatching kDefaultMatching;
  VectorMatching set_matching;
  set_matching.card = VectorMatchCardinality::kManyToMany;
  const VectorMatching& m =
      b.matching ? *b.matching : (IsSetOperator(b.op) ? set_matching : kDefaultMatching);
  const bool set_op = IsSetOperator(b.op);
  if (!set_op && m.card == VectorMatchCardinality::kManyToMany) {
    Fail(ErrorType::kInternal, "many-to-many only allowed for set operators");
  }

  // Join signatures, computed once per series for the whole range.
  std::unordered_map<std::string, int> sig_ord;
  auto sigs_of = [&](const Matrix& mat) {
    std::vector<int> out(mat.size());
    for (size_t i = 0; i < mat.size(); ++i) {
      ctx_.Poll();
      auto [it, fresh] = sig_ord.try_emplace(Signature(mat[i].metric, m.on, m.matching_labels),
                                             static_cast<int>(sig_ord.size()));
      out[i] = it->second;
    }
    return out;
  };
  const std::vector<int> lsig = sigs_of(lhs);
  const std::vector<int> rsig = sigs_of(rhs);
  const size_t nsigs = sig_ord.size();

  SeriesCollector col(ctx_, NumSteps());
  StepCursor lcur(lhs), rcur(rhs);
  std::vector<Item> litems, ritems;
  // Marks stamped with the step number, so nothing needs clearing per step.
  std::vector<int64_t> mark(nsigs, -1);
  std::vector<int64_t> matched(nsigs, -1);
  std::vector<int> right_of(nsigs, -1);
  std::vector<double> right_val(nsigs, 0);
  std::vector<std::vector<uint64_t>> matched_sets(nsigs);
  std::vector<int> lout(lhs.size(), -1), rout(rhs.size(), -1);
  std::unordered_map<uint64_t, int> pair_out;  // (many, one) series → output

  const bool one_to_many = m.card == VectorMatchCardinality::kOneToMany;
  const Matrix& many = one_to_many ? rhs : lhs;
  const Matrix& one = one_to_many ? lhs : rhs;
  const std::vector<int>& many_sig = one_to_many ? rsig : lsig;
  const std::vector<int>& one_sig = one_to_many ? lsig : rsig;
  const bool drop_name = ChangesMetricSchema(b.op) || b.return_bool;

  auto result_metric = [&](int mi, int oi) -> int {
    const uint64_t key = (static_cast<uint64_t>(mi) << 32) | static_cast<uint32_t>(oi);
    auto it = pair_out.find(key);
    if (it != pair_out.end()) return it->second;
    const Labels& ls = many[static_cast<size_t>(mi)].metric;
    const Labels& rs = one[static_cast<size_t>(oi)].metric;
    std::vector<Label> items;
    items.reserve(ls.size());
    for (const auto& x : ls) {
      if (drop_name && x.name == kMetricName) continue;
      if (m.card == VectorMatchCardinality::kOneToOne) {
        const bool listed = std::find(m.matching_labels.begin(), m.matching_labels.end(), x.name) !=
                            m.matching_labels.end();
        if (m.on != listed) continue;
      }
      items.push_back(x);
    }
    for (const auto& name : m.include) {
      std::erase_if(items, [&](const Label& l) { return l.name == name; });
      const std::string_view v = rs.Get(name);
      if (!v.empty()) items.push_back(Label{name, std::string(v)});
    }
    const int out = col.IndexOf(Labels::FromUnsorted(std::move(items)));
    pair_out.emplace(key, out);
    return out;
  };

  const int64_t work_per_step = 1 + static_cast<int64_t>(lhs.size() + rhs.size());
  int64_t step = 0;
  for (int64_t ts = start_; ts <= end_; ts += interval_, ++step) {
    ctx_.Poll(work_per_step);
    Gather(lhs, lcur, ts, litems);
    Gather(rhs, rcur, ts, ritems);
    auto emit_l = [&](const Item& it) {
      int& o = lout[static_cast<size_t>(it.series)];
      if (o < 0) o = col.IndexOf(lhs[static_cast<size_t>(it.series)].metric);
      col.AddAt(o, ts, it.f);
    };
    auto emit_r = [&](const Item& it) {
      int& o = rout[static_cast<size_t>(it.series)];
      if (o < 0) o = col.IndexOf(rhs[static_cast<size_t>(it.series)].metric);
      col.AddAt(o, ts, it.f);
    };
    switch (b.op) {
      case BinaryOp::kAnd:
        if (litems.empty() || ritems.empty()) break;
        for (const auto& r : ritems) mark[static_cast<size_t>(rsig[r.series])] = step;
        for (const auto& l : litems) {
          if (mark[static_cast<size_t>(lsig[l.series])] == step) emit_l(l);
        }
        break;
      case BinaryOp::kOr:
        for (const auto& l : litems) {
          mark[static_cast<size_t>(lsig[l.series])] = step;
          emit_l(l);
        }
        for (const auto& r : ritems) {
          if (mark[static_cast<size_t>(rsig[r.series])] != step) emit_r(r);
        }
        break;
      case BinaryOp::kUnless:
        for (const auto& r : ritems) mark[static_cast<size_t>(rsig[r.series])] = step;
        for (const auto& l : litems) {
          if (mark[static_cast<size_t>(lsig[l.series])] != step) emit_l(l);
        }
        break;
      default: {
        if (litems.empty() || ritems.empty()) break;
        const std::vector<Item>& many_items = one_to_many ? ritems : litems;
        const std::vector<Item>& one_items = one_to_many ? litems : ritems;
        for (const auto& r : one_items) {
          const size_t sig = static_cast<size_t>(one_sig[r.series]);
          if (mark[sig] == step) {
            const Labels& a = one[static_cast<size_t>(r.series)].metric;
            const Labels& d = one[static_cast<size_t>(right_of[sig])].metric;
            std::string d1 = LabelsString(a), d2 = LabelsString(d);
            if (d1 > d2) std::swap(d1, d2);
            FailExec("found duplicate series for the match group " +
                     LabelsString(MatchLabels(a, m.on, m.matching_labels)) + " on the " +
                     (one_to_many ? "left" : "right") + " hand-side of the operation: [" + d1 +
                     ", " + d2 +
                     "];many-to-many matching not allowed: matching labels must be unique on one "
                     "side");
          }
          mark[sig] = step;
          right_of[sig] = r.series;
          right_val[sig] = r.f;
        }
        // Values of the "one" side by signature for this step.
        for (const auto& l : many_items) {
          const size_t sig = static_cast<size_t>(many_sig[l.series]);
          if (mark[sig] != step) continue;
          const int oi = right_of[sig];
          double fl = l.f, fr = right_val[sig];
          if (one_to_many) std::swap(fl, fr);
          bool keep;
          double v = ElemBinop(b.op, fl, fr, &keep);
          if (b.return_bool) v = keep ? 1 : 0;
          const int out = result_metric(l.series, oi);
          if (m.card == VectorMatchCardinality::kOneToOne) {
            if (matched[sig] == step) {
              FailExec(
                  "multiple matches for labels: many-to-one matching must be explicit "
                  "(group_left/group_right)");
            }
            matched[sig] = step;
          } else {
            auto& set = matched_sets[sig];
            if (matched[sig] != step) {
              set.clear();
              matched[sig] = step;
            }
            const uint64_t h = col.metric(out).Hash();
            if (std::find(set.begin(), set.end(), h) != set.end()) {
              FailExec("multiple matches for labels: grouping labels must ensure unique matches");
            }
            set.push_back(h);
          }
          if (!keep && !b.return_bool) continue;
          col.AddAt(out, ts, v);
        }
        break;
      }
    }
  }
  return col.Take();
}

}  // namespace gpumon::promql::engine_internal
