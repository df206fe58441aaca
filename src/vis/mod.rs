//! The figure stage: plotly figures written as offline HTML into `figures/`.
