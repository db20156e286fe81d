//! `soil-types`: Soil name resolution, type and effect-row checking, holes and check facts.
