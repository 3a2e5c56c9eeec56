//! A configuration validated and resolved in one step into the plan of a run: the settings,
//! the grouping of minima in force (chosen for `target-similarity`, or as given), the key
//! maker of that grouping, and the pair checks with their thresholds. `Plan::try_from(&config)`
//! is the only way to make one, so every stage that takes a [`Plan`] (the engine, clustering,
//! the index, comparison, reuse) runs on settings that passed [`Config::validate`], and none of
//! them derives these values again. A plan reads as the [`Config`] it was made from.

use std::ops::Deref;

use super::{Config, ConfigError};
use crate::cluster::Verifier;
use crate::sketch::grouping::Grouping;
use crate::sketch::keys::KeyMaker;

/// A validated configuration with what the stages derive from it.
#[derive(Debug, Clone)]
pub struct Plan {
    config: Config,
    /// The grouping of minima into candidate keys.
    pub grouping: Grouping,
    /// The maker of candidate keys (supershingles or megashingles) of that grouping.
    pub(crate) key_maker: KeyMaker,
    /// The pair checks.
    pub verifier: Verifier,
    /// The lowest similarity at which a pair can link two documents (see
    /// [`super::ClusterConfig::weakest_link`]).
    pub(crate) weakest_link: f64,
}

impl TryFrom<&Config> for Plan {
    type Error = ConfigError;

    /// Validates `config` and resolves what the stages derive from it.
    fn try_from(config: &Config) -> Result<Plan, ConfigError> {
        config.validate()?;
        let grouping = config.supershingle.grouping(config.signature.minima);
        Ok(Plan {
            key_maker: KeyMaker::new(&grouping, config.signature.seed),
            grouping,
            verifier: Verifier::new(config),
            weakest_link: config.cluster.weakest_link(),
            config: config.clone(),
        })
    }
}

impl Plan {
    /// The configuration it was made from.
    pub fn config(&self) -> &Config {
        &self.config
    }
}

impl Deref for Plan {
    type Target = Config;

    fn deref(&self) -> &Config {
        &self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Matching;

    fn plan(config: &Config) -> Plan {
        Plan::try_from(config).unwrap()
    }

    #[test]
    fn an_invalid_configuration_makes_no_plan() {
        let mut config = Config::default();
        config.shingle.size = 0;
        let error = Plan::try_from(&config).unwrap_err().to_string();
        assert_eq!(error, config.validate().unwrap_err().to_string());
        assert!(error.contains("shingle"), "{error}");
    }

    #[test]
    fn the_grouping_is_chosen_for_the_target_or_taken_as_given() {
        let mut config = Config::default();
        config.supershingle.target_similarity = 0.0;
        let classic = plan(&config);
        assert_eq!(
            classic.grouping,
            Grouping {
                groups: 6,
                minima_per_group: 14,
                matching: Matching::Megashingle
            }
        );
        config.supershingle.target_similarity = 0.5;
        let chosen = plan(&config);
        assert_eq!(chosen.grouping, crate::sketch::grouping::choose(0.5, 84));
        assert_eq!(
            chosen.key_maker.keys_per_signature(),
            chosen.grouping.keys()
        );
    }

    #[test]
    fn the_weakest_link_is_the_lower_threshold_in_force() {
        let mut config = Config::default();
        config.cluster.min_similarity = 0.4;
        config.cluster.attach_similarity = 0.25;
        assert_eq!(plan(&config).weakest_link, 0.25);
        assert_eq!(plan(&config).verifier.prefilter, 0.125);
        config.cluster.attach_similarity = 0.0;
        assert_eq!(plan(&config).weakest_link, 0.4);
        assert_eq!(plan(&config).cluster.min_similarity, 0.4);
    }
}
