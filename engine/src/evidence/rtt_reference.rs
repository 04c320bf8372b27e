//! Calibration data for the great-circle RTT estimate (evidence rung 5 of
//! SPEC §3, confidence class "inferred").
//!
//! The estimate is only used when nothing better exists: no measured path
//! between the clusters, no measured or declared link between the sites, and
//! the two placements are not in the same cluster or site. It is a rough,
//! physics-shaped guess, not a measurement.
//!
//! Method and the full error table: `docs/rtt-calibration.md`.
//!
//! This file is deliberately plain data and arithmetic: no trigonometry and no
//! dependencies. The haversine distance (Earth radius 6371.0 km) is computed
//! by the engine in `rtt.rs` through `libm`.

/// Fixed part of the estimate, in milliseconds of round-trip time.
///
/// This is the intercept of an ordinary least-squares fit of
/// `rtt_ms = A + B * d_km` over the 67 reference pairs below
/// (fitted value 4.29 ms, rounded). It stands for the distance-independent
/// costs every inter-region round trip pays: metro access and aggregation
/// inside each region, router and switch hops, and the fact that a "site"
/// coordinate is a metro centre while the real facilities are spread over
/// tens of kilometres.
///
/// The intercept is weakly determined by the fit (standard error about
/// 3.9 ms, because the long-haul pairs dominate a least-squares fit), but the
/// short pairs (< 1000 km) agree with it: their mean error is about 0 ms and
/// their mean absolute error about 1.3 ms.
pub const GREAT_CIRCLE_BASE_MS: f64 = 4.3;

/// Distance-dependent part of the estimate, in milliseconds of round-trip
/// time per kilometre of great-circle distance.
///
/// Physics floor: light in optical fibre travels at roughly 200 km per
/// millisecond (refractive index about 1.47), so a perfectly straight fibre
/// costs 1/200 ms per km each way, i.e. 0.01 ms/km for a round trip. Nothing
/// can beat that.
///
/// Real routes are longer than the great circle (cables follow coasts,
/// railways and sea-floor corridors, and traffic detours through hubs), so
/// the fitted slope is higher: 0.01607 ms/km (standard error about
/// 0.0007), rounded to 0.0161. That is an effective path about 1.6 times the
/// great-circle distance.
pub const GREAT_CIRCLE_MS_PER_KM: f64 = 0.0161;

// Checked at compile time: a round trip over straight fibre costs 0.01 ms/km,
// so the estimate may not be faster than that, nor absurdly slower.
const _: () = assert!(GREAT_CIRCLE_MS_PER_KM >= 0.01 && GREAT_CIRCLE_MS_PER_KM < 0.03);
const _: () = assert!(GREAT_CIRCLE_BASE_MS >= 0.0 && GREAT_CIRCLE_BASE_MS < 10.0);

const AZURE_P50: &str = "Microsoft Azure, Microsoft Learn page 'Azure network round-trip latency statistics', P50 table for the 30 days ending 2026-07-30; mean of the two directions";
const IBM_VPC_AVG: &str = "IBM Cloud, VPC docs 'network latency' page, inter-region average latency table for 2025-11-08 to 2025-12-07; mean of the two directions";
const CLOUDPING_AWS: &str = "AWS, measured by the third-party dashboard cloudping.co (AWS Region Latency Matrix), stored snapshot; one direction";

/// One published, measured inter-region round-trip time, with the metro
/// coordinates used for its great-circle distance.
///
/// Coordinates are approximate metro centres (to about 0.01 degree), not the exact
/// facility locations, which providers do not publish.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(not(test), allow(dead_code))]
pub struct ReferencePair {
    pub a: &'static str,
    pub b: &'static str,
    pub a_lat: f64,
    pub a_lon: f64,
    pub b_lat: f64,
    pub b_lon: f64,
    pub published_rtt_ms: f64,
    pub source: &'static str,
}

/// The pairs the constants were fitted on: 20 under 1000 km,
/// 17 between 1000 and 3000 km, and 30 intercontinental (3000 km and more).
/// Pairs were chosen for distance and continent coverage before fitting; none
/// was removed afterwards, including the routing outliers.
#[cfg_attr(not(test), allow(dead_code))]
pub const REFERENCE_PAIRS: &[ReferencePair] = &[
    ReferencePair {
        a: "Azure UK South (London)",
        b: "Azure UK West (Cardiff)",
        a_lat: 51.51,
        a_lon: -0.13,
        b_lat: 51.48,
        b_lon: -3.18,
        published_rtt_ms: 7.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure France Central (Paris)",
        b: "Azure UK South (London)",
        a_lat: 48.86,
        a_lon: 2.35,
        b_lat: 51.51,
        b_lon: -0.13,
        published_rtt_ms: 10.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure West Europe (Amsterdam)",
        b: "Azure Germany West Central (Frankfurt)",
        a_lat: 52.37,
        a_lon: 4.9,
        b_lat: 50.11,
        b_lon: 8.68,
        published_rtt_ms: 11.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure West Europe (Amsterdam)",
        b: "Azure France Central (Paris)",
        a_lat: 52.37,
        a_lon: 4.9,
        b_lat: 48.86,
        b_lon: 2.35,
        published_rtt_ms: 12.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Switzerland North (Zurich)",
        b: "Azure Italy North (Milan)",
        a_lat: 47.38,
        a_lon: 8.54,
        b_lat: 45.46,
        b_lon: 9.19,
        published_rtt_ms: 9.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Japan East (Tokyo)",
        b: "Azure Japan West (Osaka)",
        a_lat: 35.68,
        a_lon: 139.69,
        b_lat: 34.69,
        b_lon: 135.5,
        published_rtt_ms: 11.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Korea Central (Seoul)",
        b: "Azure Korea South (Busan)",
        a_lat: 37.57,
        a_lon: 126.98,
        b_lat: 35.18,
        b_lon: 129.08,
        published_rtt_ms: 8.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Southeast Asia (Singapore)",
        b: "Azure Malaysia West (Kuala Lumpur)",
        a_lat: 1.35,
        a_lon: 103.82,
        b_lat: 3.139,
        b_lon: 101.687,
        published_rtt_ms: 8.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure UAE North (Dubai)",
        b: "Azure Qatar Central (Doha)",
        a_lat: 25.2,
        a_lon: 55.27,
        b_lat: 25.29,
        b_lon: 51.53,
        published_rtt_ms: 14.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Norway East (Oslo)",
        b: "Azure Sweden Central (Gavle)",
        a_lat: 59.91,
        a_lon: 10.75,
        b_lat: 60.67,
        b_lon: 17.14,
        published_rtt_ms: 12.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Canada Central (Toronto)",
        b: "Azure Canada East (Quebec City)",
        a_lat: 43.65,
        a_lon: -79.38,
        b_lat: 46.81,
        b_lon: -71.21,
        published_rtt_ms: 13.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Australia East (Sydney)",
        b: "Azure Australia Southeast (Melbourne)",
        a_lat: -33.87,
        a_lon: 151.21,
        b_lat: -37.81,
        b_lon: 144.96,
        published_rtt_ms: 15.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure West Europe (Amsterdam)",
        b: "Azure North Europe (Dublin)",
        a_lat: 52.37,
        a_lon: 4.9,
        b_lat: 53.35,
        b_lon: -6.26,
        published_rtt_ms: 17.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Central India (Pune)",
        b: "Azure South India (Chennai)",
        a_lat: 18.52,
        a_lon: 73.86,
        b_lat: 13.08,
        b_lon: 80.27,
        published_rtt_ms: 19.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure South Africa North (Johannesburg)",
        b: "Azure South Africa West (Cape Town)",
        a_lat: -26.2,
        a_lon: 28.05,
        b_lat: -33.92,
        b_lon: 18.42,
        published_rtt_ms: 20.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure West US (San Jose)",
        b: "Azure West US 2 (Quincy WA)",
        a_lat: 37.34,
        a_lon: -121.89,
        b_lat: 47.23,
        b_lon: -119.85,
        published_rtt_ms: 24.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure West US (San Jose)",
        b: "Azure West US 3 (Phoenix)",
        a_lat: 37.34,
        a_lon: -121.89,
        b_lat: 33.45,
        b_lon: -112.07,
        published_rtt_ms: 19.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Central US (Des Moines)",
        b: "Azure South Central US (San Antonio)",
        a_lat: 41.59,
        a_lon: -93.62,
        b_lat: 29.42,
        b_lon: -98.49,
        published_rtt_ms: 26.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure East US (Boydton VA)",
        b: "Azure Central US (Des Moines)",
        a_lat: 36.67,
        a_lon: -78.39,
        b_lat: 41.59,
        b_lon: -93.62,
        published_rtt_ms: 28.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure East US (Boydton VA)",
        b: "Azure Canada Central (Toronto)",
        a_lat: 36.67,
        a_lon: -78.39,
        b_lat: 43.65,
        b_lon: -79.38,
        published_rtt_ms: 18.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure North Europe (Dublin)",
        b: "Azure Spain Central (Madrid)",
        a_lat: 53.35,
        a_lon: -6.26,
        b_lat: 40.42,
        b_lon: -3.7,
        published_rtt_ms: 33.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure West Europe (Amsterdam)",
        b: "Azure Poland Central (Warsaw)",
        a_lat: 52.37,
        a_lon: 4.9,
        b_lat: 52.23,
        b_lon: 21.01,
        published_rtt_ms: 22.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Japan East (Tokyo)",
        b: "Azure Korea Central (Seoul)",
        a_lat: 35.68,
        a_lon: 139.69,
        b_lat: 37.57,
        b_lon: 126.98,
        published_rtt_ms: 29.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure East Asia (Hong Kong)",
        b: "Azure Southeast Asia (Singapore)",
        a_lat: 22.32,
        a_lon: 114.17,
        b_lat: 1.35,
        b_lon: 103.82,
        published_rtt_ms: 36.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Japan East (Tokyo)",
        b: "Azure East Asia (Hong Kong)",
        a_lat: 35.68,
        a_lon: 139.69,
        b_lat: 22.32,
        b_lon: 114.17,
        published_rtt_ms: 49.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure UAE North (Dubai)",
        b: "Azure Central India (Pune)",
        a_lat: 25.2,
        a_lon: 55.27,
        b_lat: 18.52,
        b_lon: 73.86,
        published_rtt_ms: 32.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Australia East (Sydney)",
        b: "Azure New Zealand North (Auckland)",
        a_lat: -33.87,
        a_lon: 151.21,
        b_lat: -36.85,
        b_lon: 174.76,
        published_rtt_ms: 28.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure East US (Boydton VA)",
        b: "Azure Mexico Central (Queretaro)",
        a_lat: 36.67,
        a_lon: -78.39,
        b_lat: 20.59,
        b_lon: -100.39,
        published_rtt_ms: 52.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure East US (Boydton VA)",
        b: "Azure West US (San Jose)",
        a_lat: 36.67,
        a_lon: -78.39,
        b_lat: 37.34,
        b_lon: -121.89,
        published_rtt_ms: 68.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure East US (Boydton VA)",
        b: "Azure West Europe (Amsterdam)",
        a_lat: 36.67,
        a_lon: -78.39,
        b_lat: 52.37,
        b_lon: 4.9,
        published_rtt_ms: 84.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure East US (Boydton VA)",
        b: "Azure North Europe (Dublin)",
        a_lat: 36.67,
        a_lon: -78.39,
        b_lat: 53.35,
        b_lon: -6.26,
        published_rtt_ms: 72.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure East US (Boydton VA)",
        b: "Azure UK South (London)",
        a_lat: 36.67,
        a_lon: -78.39,
        b_lat: 51.51,
        b_lon: -0.13,
        published_rtt_ms: 78.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure East US (Boydton VA)",
        b: "Azure Brazil South (Sao Paulo)",
        a_lat: 36.67,
        a_lon: -78.39,
        b_lat: -23.55,
        b_lon: -46.63,
        published_rtt_ms: 117.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure West US (San Jose)",
        b: "Azure Japan East (Tokyo)",
        a_lat: 37.34,
        a_lon: -121.89,
        b_lat: 35.68,
        b_lon: 139.69,
        published_rtt_ms: 107.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure West Europe (Amsterdam)",
        b: "Azure Southeast Asia (Singapore)",
        a_lat: 52.37,
        a_lon: 4.9,
        b_lat: 1.35,
        b_lon: 103.82,
        published_rtt_ms: 169.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure West Europe (Amsterdam)",
        b: "Azure Central India (Pune)",
        a_lat: 52.37,
        a_lon: 4.9,
        b_lat: 18.52,
        b_lon: 73.86,
        published_rtt_ms: 139.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure UK South (London)",
        b: "Azure South Africa North (Johannesburg)",
        a_lat: 51.51,
        a_lon: -0.13,
        b_lat: -26.2,
        b_lon: 28.05,
        published_rtt_ms: 163.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Australia East (Sydney)",
        b: "Azure Southeast Asia (Singapore)",
        a_lat: -33.87,
        a_lon: 151.21,
        b_lat: 1.35,
        b_lon: 103.82,
        published_rtt_ms: 95.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Australia East (Sydney)",
        b: "Azure West US (San Jose)",
        a_lat: -33.87,
        a_lon: 151.21,
        b_lat: 37.34,
        b_lon: -121.89,
        published_rtt_ms: 140.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Japan East (Tokyo)",
        b: "Azure Southeast Asia (Singapore)",
        a_lat: 35.68,
        a_lon: 139.69,
        b_lat: 1.35,
        b_lon: 103.82,
        published_rtt_ms: 72.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure West Europe (Amsterdam)",
        b: "Azure Japan East (Tokyo)",
        a_lat: 52.37,
        a_lon: 4.9,
        b_lat: 35.68,
        b_lon: 139.69,
        published_rtt_ms: 233.5,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Brazil South (Sao Paulo)",
        b: "Azure West Europe (Amsterdam)",
        a_lat: -23.55,
        a_lon: -46.63,
        b_lat: 52.37,
        b_lon: 4.9,
        published_rtt_ms: 185.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure West Europe (Amsterdam)",
        b: "Azure UAE North (Dubai)",
        a_lat: 52.37,
        a_lon: 4.9,
        b_lat: 25.2,
        b_lon: 55.27,
        published_rtt_ms: 111.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "Azure Southeast Asia (Singapore)",
        b: "Azure East US (Boydton VA)",
        a_lat: 1.35,
        a_lon: 103.82,
        b_lat: 36.67,
        b_lon: -78.39,
        published_rtt_ms: 224.0,
        source: AZURE_P50,
    },
    ReferencePair {
        a: "IBM Dallas",
        b: "IBM Washington DC",
        a_lat: 32.78,
        a_lon: -96.8,
        b_lat: 38.91,
        b_lon: -77.04,
        published_rtt_ms: 31.0,
        source: IBM_VPC_AVG,
    },
    ReferencePair {
        a: "IBM Toronto",
        b: "IBM Montreal",
        a_lat: 43.65,
        a_lon: -79.38,
        b_lat: 45.5,
        b_lon: -73.57,
        published_rtt_ms: 11.0,
        source: IBM_VPC_AVG,
    },
    ReferencePair {
        a: "IBM London",
        b: "IBM Frankfurt",
        a_lat: 51.51,
        a_lon: -0.13,
        b_lat: 50.11,
        b_lon: 8.68,
        published_rtt_ms: 13.0,
        source: IBM_VPC_AVG,
    },
    ReferencePair {
        a: "IBM London",
        b: "IBM Madrid",
        a_lat: 51.51,
        a_lon: -0.13,
        b_lat: 40.42,
        b_lon: -3.7,
        published_rtt_ms: 27.0,
        source: IBM_VPC_AVG,
    },
    ReferencePair {
        a: "IBM Tokyo",
        b: "IBM Osaka",
        a_lat: 35.68,
        a_lon: 139.69,
        b_lat: 34.69,
        b_lon: 135.5,
        published_rtt_ms: 9.0,
        source: IBM_VPC_AVG,
    },
    ReferencePair {
        a: "IBM Washington DC",
        b: "IBM London",
        a_lat: 38.91,
        a_lon: -77.04,
        b_lat: 51.51,
        b_lon: -0.13,
        published_rtt_ms: 76.0,
        source: IBM_VPC_AVG,
    },
    ReferencePair {
        a: "IBM Dallas",
        b: "IBM Tokyo",
        a_lat: 32.78,
        a_lon: -96.8,
        b_lat: 35.68,
        b_lon: 139.69,
        published_rtt_ms: 141.5,
        source: IBM_VPC_AVG,
    },
    ReferencePair {
        a: "IBM Tokyo",
        b: "IBM Sydney",
        a_lat: 35.68,
        a_lon: 139.69,
        b_lat: -33.87,
        b_lon: 151.21,
        published_rtt_ms: 115.0,
        source: IBM_VPC_AVG,
    },
    ReferencePair {
        a: "IBM Washington DC",
        b: "IBM Sao Paulo",
        a_lat: 38.91,
        a_lon: -77.04,
        b_lat: -23.55,
        b_lon: -46.63,
        published_rtt_ms: 118.5,
        source: IBM_VPC_AVG,
    },
    ReferencePair {
        a: "IBM Frankfurt",
        b: "IBM Chennai",
        a_lat: 50.11,
        a_lon: 8.68,
        b_lat: 13.08,
        b_lon: 80.27,
        published_rtt_ms: 141.5,
        source: IBM_VPC_AVG,
    },
    ReferencePair {
        a: "AWS af-south-1 (Cape Town)",
        b: "AWS eu-west-2 (London)",
        a_lat: -33.92,
        a_lon: 18.42,
        b_lat: 51.51,
        b_lon: -0.13,
        published_rtt_ms: 150.06,
        source: CLOUDPING_AWS,
    },
    ReferencePair {
        a: "AWS af-south-1 (Cape Town)",
        b: "AWS eu-central-1 (Frankfurt)",
        a_lat: -33.92,
        a_lon: 18.42,
        b_lat: 50.11,
        b_lon: 8.68,
        published_rtt_ms: 155.41,
        source: CLOUDPING_AWS,
    },
    ReferencePair {
        a: "AWS af-south-1 (Cape Town)",
        b: "AWS us-east-1 (Ashburn VA)",
        a_lat: -33.92,
        a_lon: 18.42,
        b_lat: 39.04,
        b_lon: -77.49,
        published_rtt_ms: 226.85,
        source: CLOUDPING_AWS,
    },
    ReferencePair {
        a: "AWS af-south-1 (Cape Town)",
        b: "AWS ap-south-1 (Mumbai)",
        a_lat: -33.92,
        a_lon: 18.42,
        b_lat: 19.08,
        b_lon: 72.88,
        published_rtt_ms: 151.93,
        source: CLOUDPING_AWS,
    },
    ReferencePair {
        a: "AWS ap-east-1 (Hong Kong)",
        b: "AWS ap-east-2 (Taipei)",
        a_lat: 22.32,
        a_lon: 114.17,
        b_lat: 25.03,
        b_lon: 121.57,
        published_rtt_ms: 16.22,
        source: CLOUDPING_AWS,
    },
    ReferencePair {
        a: "AWS ap-east-1 (Hong Kong)",
        b: "AWS ap-southeast-1 (Singapore)",
        a_lat: 22.32,
        a_lon: 114.17,
        b_lat: 1.35,
        b_lon: 103.82,
        published_rtt_ms: 34.01,
        source: CLOUDPING_AWS,
    },
    ReferencePair {
        a: "AWS ap-east-1 (Hong Kong)",
        b: "AWS ap-northeast-2 (Seoul)",
        a_lat: 22.32,
        a_lon: 114.17,
        b_lat: 37.57,
        b_lon: 126.98,
        published_rtt_ms: 39.73,
        source: CLOUDPING_AWS,
    },
    ReferencePair {
        a: "AWS ap-east-1 (Hong Kong)",
        b: "AWS ap-northeast-1 (Tokyo)",
        a_lat: 22.32,
        a_lon: 114.17,
        b_lat: 35.68,
        b_lon: 139.69,
        published_rtt_ms: 52.55,
        source: CLOUDPING_AWS,
    },
    ReferencePair {
        a: "AWS ap-east-1 (Hong Kong)",
        b: "AWS ap-south-1 (Mumbai)",
        a_lat: 22.32,
        a_lon: 114.17,
        b_lat: 19.08,
        b_lon: 72.88,
        published_rtt_ms: 93.6,
        source: CLOUDPING_AWS,
    },
    ReferencePair {
        a: "AWS ap-east-1 (Hong Kong)",
        b: "AWS ap-southeast-2 (Sydney)",
        a_lat: 22.32,
        a_lon: 114.17,
        b_lat: -33.87,
        b_lon: 151.21,
        published_rtt_ms: 125.46,
        source: CLOUDPING_AWS,
    },
    ReferencePair {
        a: "AWS ap-east-1 (Hong Kong)",
        b: "AWS us-west-2 (Boardman OR)",
        a_lat: 22.32,
        a_lon: 114.17,
        b_lat: 45.84,
        b_lon: -119.7,
        published_rtt_ms: 146.27,
        source: CLOUDPING_AWS,
    },
    ReferencePair {
        a: "AWS ap-east-1 (Hong Kong)",
        b: "AWS eu-west-2 (London)",
        a_lat: 22.32,
        a_lon: 114.17,
        b_lat: 51.51,
        b_lon: -0.13,
        published_rtt_ms: 199.3,
        source: CLOUDPING_AWS,
    },
    ReferencePair {
        a: "AWS ap-east-1 (Hong Kong)",
        b: "AWS eu-west-1 (Dublin)",
        a_lat: 22.32,
        a_lon: 114.17,
        b_lat: 53.35,
        b_lon: -6.26,
        published_rtt_ms: 257.54,
        source: CLOUDPING_AWS,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_pairs_are_well_formed() {
        assert!(REFERENCE_PAIRS.len() >= 20);
        for p in REFERENCE_PAIRS {
            assert!(p.published_rtt_ms > 0.0, "{} - {}", p.a, p.b);
            for lat in [p.a_lat, p.b_lat] {
                assert!((-90.0..=90.0).contains(&lat), "{} - {}", p.a, p.b);
            }
            for lon in [p.a_lon, p.b_lon] {
                assert!((-180.0..=180.0).contains(&lon), "{} - {}", p.a, p.b);
            }
            assert!(!p.source.is_empty());
        }
    }
}
