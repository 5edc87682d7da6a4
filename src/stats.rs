//! A sweep's data and its statistics: the [`plan`] (what a sweep covers and each run's
//! measure), the [`sequential`] test that decides a probe's outcome, the [`logistic`]
//! fit of the collapse curve with its profile-likelihood confidence interval, and the
//! [`binomial`] intervals of a probe's collapse share, and [`student`]'s t interval of a
//! mean over seeds (a calibration's figures). Plain data and pure functions:
//! `report/`, `export/` and `experiment/` read them; this module reads only `scenario`.

pub mod binomial;
pub mod logistic;
pub mod plan;
pub mod sequential;
pub mod student;
