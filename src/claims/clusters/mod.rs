//! Claims of Geshkovski, Letrouit, Polyanskiy, Rigollet, "The emergence of clusters
//! in self-attention dynamics" (clusters.md). Each module owns one claim ID.
