#include "costmodel/table_terms.h"

namespace pase {

CostTerms table_terms(const CostTables& tables, const CostModel& model, size_t v, size_t config) {
  const int32_t* splits = tables.configs[v][config];
  return tables.per_node.empty() ? model.layer_terms(tables.models[v], splits)
                                 : model.layer_terms_on_nodes(tables.models[v], splits, tables.per_node[v][config]);
}

}  // namespace pase
