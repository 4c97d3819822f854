// plan_einsum: the vertices an Einsum lowers to compute the Einsum. Checked
// numerically against a direct evaluation (the sum, over every letter the
// output lacks, of the operands' product) on small integer tensors, for
// hand-picked equations and random ones.
#ifdef PASE_HAVE_ONNX
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <stdexcept>

#include "onnximport/einsum_chain.h"

using namespace pase;

namespace {

struct Tensor {
  std::string term;
  std::vector<double> data;  // row-major over term's letters
};

// out[term] = Σ over the other letters of Π operands, by brute force over every letter's values.
Tensor evaluate(const std::vector<const Tensor*>& operands, const std::string& out, const std::map<char, int>& size) {
  std::string letters;
  for (const Tensor* t : operands)
    for (char c : t->term)
      if (letters.find(c) == std::string::npos) letters += c;
  auto offset = [&](const std::string& term, const std::map<char, int>& at) {
    size_t o = 0;
    for (char c : term) o = o * static_cast<size_t>(size.at(c)) + static_cast<size_t>(at.at(c));
    return o;
  };
  size_t count = 1;
  for (char c : out) count *= static_cast<size_t>(size.at(c));
  Tensor result{out, std::vector<double>(count, 0.0)};
  std::map<char, int> at;
  for (char c : letters) at[c] = 0;
  for (;;) {
    double product = 1;
    for (const Tensor* t : operands) product *= t->data[offset(t->term, at)];
    result.data[offset(out, at)] += product;
    size_t i = 0;
    for (; i < letters.size(); ++i) {
      if (++at[letters[i]] < size.at(letters[i])) break;
      at[letters[i]] = 0;
    }
    if (i == letters.size()) break;
  }
  return result;
}

// Runs the plan's steps; Sum, Contract and Transpose are each an einsum of their own letters.
Tensor run_plan(const std::vector<EinsumStep>& steps, const std::vector<Tensor>& operands, const std::map<char, int>& size) {
  std::vector<Tensor> results;
  for (const EinsumStep& step : steps) {
    std::vector<const Tensor*> inputs;
    for (int in : step.inputs)
      inputs.push_back(in >= 0 ? &operands[static_cast<size_t>(in)] : &results[static_cast<size_t>(-1 - in)]);
    if (step.kind == EinsumStep::Kind::Contract) {
      REQUIRE(inputs.size() == 2);
      CHECK(step.equation == inputs[0]->term + "," + inputs[1]->term + "->" + step.term);
    } else {
      REQUIRE(inputs.size() == 1);
    }
    if (step.kind == EinsumStep::Kind::Sum) {
      // The axes are those of the input's letters the result drops.
      std::vector<int64_t> dropped;
      for (size_t d = 0; d < inputs[0]->term.size(); ++d)
        if (step.term.find(inputs[0]->term[d]) == std::string::npos) dropped.push_back(static_cast<int64_t>(d));
      CHECK(step.axes == dropped);
    }
    if (step.kind == EinsumStep::Kind::Transpose)
      for (size_t i = 0; i < step.perm.size(); ++i) CHECK(step.term[i] == inputs[0]->term[static_cast<size_t>(step.perm[i])]);
    results.push_back(evaluate(inputs, step.term, size));
  }
  return results.empty() ? operands[0] : results.back();
}

// Checks the plan of `terms` against the direct evaluation; false when plan_einsum refuses it.
bool plan_matches(const EinsumTerms& terms, std::mt19937& random) {
  std::vector<EinsumStep> steps;
  try {
    steps = plan_einsum(terms);
  } catch (const std::invalid_argument&) {
    return false;
  }
  std::map<char, int> size;
  std::uniform_int_distribution<int> extent(1, 3), value(-3, 3);
  std::vector<Tensor> operands;
  for (const std::string& term : terms.operands) {
    for (char c : term)
      if (!size.count(c)) size[c] = extent(random);
    size_t count = 1;
    for (char c : term) count *= static_cast<size_t>(size[c]);
    Tensor t{term, {}};
    for (size_t i = 0; i < count; ++i) t.data.push_back(value(random));
    operands.push_back(t);
  }
  std::vector<const Tensor*> all;
  for (const Tensor& t : operands) all.push_back(&t);
  const Tensor direct = evaluate(all, terms.output, size);
  const Tensor lowered = run_plan(steps, operands, size);
  CHECK(lowered.term == terms.output);
  CHECK(lowered.data == direct.data);
  // Every contraction but the last keeps only letters that a later operand or the output reads.
  for (const EinsumStep& step : steps)
    if (step.kind == EinsumStep::Kind::Contract && step.term != terms.output)
      for (char c : step.term) {
        bool needed = terms.output.find(c) != std::string::npos;
        for (size_t j = static_cast<size_t>(step.operand) + 1; j < terms.operands.size(); ++j)
          needed = needed || terms.operands[j].find(c) != std::string::npos;
        CHECK(needed);
      }
  return true;
}

}  // namespace

TEST_CASE("plan_einsum") {
  std::mt19937 random(7);
  SUBCASE("hand-picked equations compute what they say") {
    const std::vector<EinsumTerms> cases = {
        {{"te", "etd"}, "td"},       {{"se", "sc"}, "sec"},         {{"sec", "ecm"}, "sm"},
        {{"abc", "cd"}, "ad"},       {{"ab", "bc", "cd"}, "ad"},    {{"ab", "cd", "bd"}, "ac"},
        {{"ijk"}, "ki"},             {{"ij"}, "j"},                 {{"i", "j", "k"}, "kji"},
        {{"abc", "bcd", "cde", "a"}, "e"}, {{"ab", "ab", "ab"}, "a"}, {{"xa", "yb"}, "yx"}};
    for (const EinsumTerms& terms : cases) {
      CAPTURE(terms.output);
      CHECK(plan_matches(terms, random));
    }
  }
  SUBCASE("the steps' shapes") {
    std::vector<EinsumStep> steps = plan_einsum({{"abc", "cd"}, "ad"});
    REQUIRE(steps.size() == 2);
    CHECK(steps[0].kind == EinsumStep::Kind::Sum);
    CHECK(steps[0].axes == std::vector<int64_t>{1});
    CHECK(steps[0].term == "ac");
    CHECK(steps[1].inputs == std::vector<int>{-1, 1});
    CHECK(steps[1].equation == "ac,cd->ad");
    CHECK(plan_einsum({{"ij"}, "ij"}).empty());
  }
  SUBCASE("random equations of one to four operands") {
    std::uniform_int_distribution<int> operands(1, 4), letters(1, 3), pick(0, 5), coin(0, 1);
    const std::string alphabet = "abcdef";
    int planned = 0;
    for (int trial = 0; trial < 300; ++trial) {
      EinsumTerms terms;
      std::string used;
      const int n = operands(random);
      for (int j = 0; j < n; ++j) {
        std::string term;
        const int count = letters(random);
        while (static_cast<int>(term.size()) < count) {
          char c = alphabet[static_cast<size_t>(pick(random))];
          if (term.find(c) == std::string::npos) term += c;
        }
        terms.operands.push_back(term);
        for (char c : term)
          if (used.find(c) == std::string::npos) used += c;
      }
      std::shuffle(used.begin(), used.end(), random);
      for (char c : used)
        if (coin(random)) terms.output += c;
      CAPTURE(trial);
      planned += plan_matches(terms, random) ? 1 : 0;
    }
    CHECK(planned > 100);  // the rest have a scalar output, operand or intermediate
  }
  SUBCASE("what pase cannot represent is refused in one line") {
    CHECK_THROWS_WITH_AS((void)plan_einsum({{"ii", "ij"}, "j"}),
                         "operand 0 'ii' repeats letter 'i' (a diagonal, which pase does not model)", std::invalid_argument);
    CHECK_THROWS_WITH_AS((void)plan_einsum({{"ij", "ij"}, ""}), "its output is a scalar, which pase does not model",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS((void)plan_einsum({{"", "ij"}, "ij"}), "operand 0 is a scalar, which pase does not model",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS((void)plan_einsum({{"ab", "c"}, "c"}), "operand 0 'ab' sums to a scalar, which pase does not model",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS((void)plan_einsum({{"ab", "ab", "c"}, "c"}),
                         "the contraction of operands 0 to 1 sums to a scalar, which pase does not model",
                         std::invalid_argument);
  }
}
#endif  // PASE_HAVE_ONNX
