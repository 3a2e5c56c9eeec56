//! A configuration resolved once into the values the stages derive from it: the grouping of
//! minima in force (chosen for `target-similarity`, or as given), the key maker of that
//! grouping, and the pair checks with their thresholds. The engine, clustering, the index and
//! comparison take a [`Resolved`], so none of them derives these again; it reads as the
//! [`Config`] it was made from.

use std::ops::Deref;

use super::Config;
use crate::cluster::Verifier;
use crate::sketch::grouping::Grouping;
use crate::sketch::keys::KeyMaker;

/// A configuration with what the stages derive from it.
#[derive(Debug, Clone)]
pub struct Resolved {
    config: Config,
    /// The grouping of minima into candidate keys.
    pub grouping: Grouping,
    /// The maker of candidate keys (supershingles or megashingles) of that grouping.
    pub key_maker: KeyMaker,
    /// The pair checks.
    pub verifier: Verifier,
    /// The lowest similarity at which a pair can link two documents (see
    /// [`super::ClusterConfig::weakest_link`]).
    pub weakest_link: f64,
}

impl Config {
    /// This configuration resolved (it should be valid: see [`Config::validate`]).
    pub fn resolve(&self) -> Resolved {
        let grouping = self.supershingle.grouping(self.signature.minima);
        Resolved {
            key_maker: KeyMaker::new(&grouping, self.signature.seed),
            grouping,
            verifier: Verifier::new(self),
            weakest_link: self.cluster.weakest_link(),
            config: self.clone(),
        }
    }
}

impl Resolved {
    /// The configuration it was made from.
    pub fn config(&self) -> &Config {
        &self.config
    }
}

impl Deref for Resolved {
    type Target = Config;

    fn deref(&self) -> &Config {
        &self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Matching;

    #[test]
    fn the_grouping_is_chosen_for_the_target_or_taken_as_given() {
        let mut config = Config::default();
        config.supershingle.target_similarity = 0.0;
        let classic = config.resolve();
        assert_eq!(
            classic.grouping,
            Grouping {
                groups: 6,
                minima_per_group: 14,
                matching: Matching::Megashingle
            }
        );
        config.supershingle.target_similarity = 0.5;
        let chosen = config.resolve();
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
        assert_eq!(config.resolve().weakest_link, 0.25);
        assert_eq!(config.resolve().verifier.prefilter, 0.125);
        config.cluster.attach_similarity = 0.0;
        assert_eq!(config.resolve().weakest_link, 0.4);
        assert_eq!(config.resolve().cluster.min_similarity, 0.4);
    }
}
